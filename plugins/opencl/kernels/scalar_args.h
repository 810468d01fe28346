// Scalars as kernel arguments: a value converted to one of the types kernels compute in (see
// kernels/common.cl: compute_t, acc_t, product_t), as the bytes a kernel argument takes.
#pragma once

#include "runtime/device.h"

#include <backplane/sdk/dtype.hpp>
#include <backplane/sdk/scalar.hpp>

#include <array>
#include <cstddef>

namespace bp::opencl {

// A scalar kernel argument: the bytes of one value of a kernel's type.
struct ScalarArg {
  std::array<unsigned char, 8> bytes{};
  size_t size = 0;
};

// `value` as compute_t of `dtype` (float for the 16-bit floats, int 0/1 for Bool), converted
// as the CPU backend converts it.
ScalarArg compute_scalar(DType dtype, const Scalar& value);
// `value` as acc_t: double (float without fp64) for floating dtypes, int64 otherwise.
ScalarArg accumulator_scalar(const Device& device, DType dtype, const Scalar& value);
// `value` as product_t: compute_t for floating dtypes, int64 otherwise.
ScalarArg product_scalar(DType dtype, const Scalar& value);

}  // namespace bp::opencl
