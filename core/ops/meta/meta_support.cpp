#include "meta_support.h"

#include <backplane/factories.h>
#include <backplane/sdk/dispatch.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

namespace bp::meta::support {
namespace {

bool is_host_wrapped_number(const Tensor& t) {
  return t.impl()->is_wrapped_number() && t.device().is_cpu();
}

// The wrapped number's value, read from the host without a kernel.
Scalar wrapped_value(const Tensor& t) {
  switch (t.dtype()) {
    case DType::Bool: return Scalar(*t.data_ptr<bool>());
    case DType::Int64: return Scalar(*t.data_ptr<int64_t>());
    case DType::Float64: return Scalar(*t.data_ptr<double>());
    default:
      throw Error(ErrorCode::Internal,
                  fmt::format("a wrapped number of dtype {}; the core wraps numbers as Bool, "
                              "Long or Double",
                              dtype_name(t.dtype())));
  }
}

[[noreturn]] void throw_device_mismatch(Device a, Device b) {
  throw Error(
      fmt::format("expected all tensors on one device, got {} and {}; move them with "
                  ".to(device) first",
                  a.str(), b.str()));
}

}  // namespace

namespace {

// The lowest and highest finite values of a dtype other than Bool.
std::pair<double, double> value_range(DType dtype) {
  constexpr double kHalfMax = 65504.0;
  constexpr double kBFloat16Max = 3.3895313892515355e38;
  if (dtype == kFloat16) return {-kHalfMax, kHalfMax};
  if (dtype == kBFloat16) return {-kBFloat16Max, kBFloat16Max};
  return plugin::visit(dtype, [](auto tag) -> std::pair<double, double> {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_arithmetic_v<T>) {
      return {static_cast<double>(std::numeric_limits<T>::lowest()),
              static_cast<double>(std::numeric_limits<T>::max())};
    } else {
      return {0, 0};  // not reached: the 16-bit floats are above
    }
  });
}

}  // namespace

void check_scalar_fits(std::string_view op, const Scalar& value, DType dtype) {
  if (dtype == kBool) return;
  const auto [lowest, highest] = value_range(dtype);
  bool fits = true;
  if (value.is_floating_point()) {
    const double v = value.to<double>();
    fits = is_floating_point(dtype) ? !std::isfinite(v) || (v >= lowest && v <= highest)
                                    : v > lowest - 1 && v < highest + 1;
  } else if (!value.is_bool() && dtype != kInt64) {
    // Every other dtype's range is exact in double, and int64 values compare exactly to it.
    const int64_t v = value.to<int64_t>();
    fits = static_cast<long double>(v) >= lowest && static_cast<long double>(v) <= highest;
  }
  if (fits) return;
  const std::string shown = value.is_floating_point() ? fmt::format("{}", value.to<double>())
                                                      : fmt::format("{}", value.to<int64_t>());
  throw Error(
      fmt::format("{}: value {} cannot be converted to {} without overflow ({} holds {} to "
                  "{})",
                  op, shown, dtype_name(dtype), dtype_name(dtype), lowest, highest));
}

void check_defined(const Tensor& t) {
  if (!t.defined()) {
    throw Error(
        "an argument is an undefined tensor (a default-constructed bp::Tensor); pass a "
        "tensor that holds data");
  }
}

namespace {

// common_device, and with `host_scalars_join` elementwise_device.
Device device_of_all(std::initializer_list<const Tensor*> tensors, bool host_scalars_join) {
  std::optional<Device> device;
  std::optional<Device> host_scalar;  // a 0-dim host tensor's, while no other device is known
  for (const Tensor* t : tensors) {
    if (t == nullptr) continue;
    check_defined(*t);
    if (is_host_wrapped_number(*t)) continue;
    if (host_scalars_join && t->dim() == 0 && t->device().is_cpu()) {
      host_scalar = t->device();
      continue;
    }
    if (!device) device = t->device();
    if (t->device() != *device) throw_device_mismatch(*device, t->device());
  }
  return device ? *device : host_scalar.value_or(Device::cpu());
}

}  // namespace

Device common_device(std::initializer_list<const Tensor*> tensors) {
  return device_of_all(tensors, /*host_scalars_join=*/false);
}

Device elementwise_device(std::initializer_list<const Tensor*> tensors) {
  return device_of_all(tensors, /*host_scalars_join=*/true);
}

Device common_device(std::span<const Tensor> tensors) {
  std::optional<Device> device;
  for (const Tensor& t : tensors) {
    check_defined(t);
    if (is_host_wrapped_number(t)) continue;
    if (!device) device = t.device();
    if (t.device() != *device) throw_device_mismatch(*device, t.device());
  }
  return device.value_or(Device::cpu());
}

void prepare_indices(std::string_view op, const char* name, Tensor& indices) {
  if (indices.dtype() != kInt64 && indices.dtype() != kInt32) {
    throw Error(
        fmt::format("{}: expected {} of dtype Long or Int, got {}; convert with "
                    ".to(bp::kInt64)",
                    op, name, dtype_name(indices.dtype())));
  }
  if (indices.dtype() != kInt64) indices = indices.to(kInt64);
}

void check_same_dtype(const Tensor& t, DType dtype, std::string_view what) {
  if (t.dtype() != dtype) {
    throw Error(fmt::format("{} has dtype {} but the input has {}; convert it with .to({})", what,
                            dtype_name(t.dtype()), dtype_name(dtype), dtype_name(dtype)));
  }
}

DimVector broadcast_shape(std::initializer_list<const Tensor*> tensors) {
  DimVector shape;
  bool first = true;
  for (const Tensor* t : tensors) {
    const IntArrayRef sizes = t->sizes();
    // Tensors of one shape, the common case, need no broadcasting.
    if (first) {
      shape.assign(sizes);
      first = false;
    } else if (!std::ranges::equal(shape.ref(), sizes)) {
      shape = detail::broadcast_shapes(shape, sizes);
    }
  }
  return shape;
}

void prepare_input(Tensor& t, DType dtype, IntArrayRef shape, Device device) {
  // A number is converted on the host, which needs no kernel, and then travels as one value.
  if (is_host_wrapped_number(t) && (t.dtype() != dtype || device != t.device())) {
    t = scalar_tensor(wrapped_value(t), dtype, device);
  } else {
    if (t.dtype() != dtype) t = t.to(dtype);
    if (t.device() != device) t = t.to(device);  // a 0-dim host tensor (elementwise_device)
  }
  const IntArrayRef sizes = t.sizes();
  if (!std::equal(sizes.begin(), sizes.end(), shape.begin(), shape.end())) t = t.expand(shape);
}

DimMask reduction_mask(std::string_view op, IntArrayRef dims, int64_t rank) {
  if (rank > 64) {
    throw Error(fmt::format("{}: reductions support tensors of up to 64 dims, got {}", op, rank));
  }
  DimMask mask;
  if (dims.empty()) {
    for (int64_t d = 0; d < rank; ++d) mask.set(d);
    return mask;
  }
  for (int64_t dim : dims) {
    const int64_t d = detail::wrap_dim(op, dim, rank);
    if (mask.test(d)) {
      throw Error(fmt::format("{}: dim {} appears multiple times in the list of dims {}", op, d,
                              detail::format_shape(dims)));
    }
    mask.set(d);
  }
  return mask;
}

DimVector reduced_shape(IntArrayRef sizes, const DimMask& mask, bool keepdim) {
  DimVector shape;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (!mask.test(d)) {
      shape.push_back(sizes[d]);
    } else if (keepdim) {
      shape.push_back(1);
    }
  }
  return shape;
}

}  // namespace bp::meta::support
