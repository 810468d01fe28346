#include "kernels/scalar_args.h"

#include <backplane/sdk/status.hpp>

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

namespace bp::opencl {
namespace {

template <typename T>
ScalarArg scalar_of(T value) {
  static_assert(std::is_arithmetic_v<T> && sizeof(T) <= 8);
  ScalarArg arg;
  std::memcpy(arg.bytes.data(), &value, sizeof value);
  arg.size = sizeof value;
  return arg;
}

}  // namespace

ScalarArg compute_scalar(DType dtype, const Scalar& value) {
  switch (dtype) {
    case DType::Float32:
    case DType::Float16:
    case DType::BFloat16: return scalar_of(value.to<float>());
    case DType::Float64: return scalar_of(value.to<double>());
    case DType::Int8: return scalar_of(value.to<int8_t>());
    case DType::UInt8: return scalar_of(value.to<uint8_t>());
    case DType::Int32: return scalar_of(value.to<int32_t>());
    case DType::Int64: return scalar_of(value.to<int64_t>());
    case DType::Bool: return scalar_of(static_cast<int32_t>(value.to<bool>()));
  }
  throw plugin::Error(BP_STATUS_UNIMPLEMENTED,
                      "unknown dtype code " + std::to_string(static_cast<int>(dtype)));
}

ScalarArg accumulator_scalar(const Device& device, DType dtype, const Scalar& value) {
  if (!is_floating_point(dtype)) return scalar_of(value.to<int64_t>());
  return device.has_fp64() ? scalar_of(value.to<double>()) : scalar_of(value.to<float>());
}

ScalarArg product_scalar(DType dtype, const Scalar& value) {
  if (!is_floating_point(dtype)) return scalar_of(value.to<int64_t>());
  return dtype == DType::Float64 ? scalar_of(value.to<double>()) : scalar_of(value.to<float>());
}

}  // namespace bp::opencl
