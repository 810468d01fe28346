// Which dtypes each op runs on (the CPU backend's rules), and scalars converted to the types
// kernels compute in (see kernels/common.cl: compute_t, acc_t, product_t).
#pragma once

#include "device.h"

#include <backplane/sdk/dtype_promises.hpp>
#include <backplane/sdk/scalar.hpp>
#include <backplane/sdk/tensor_view.hpp>

#include <array>
#include <cstddef>
#include <string_view>

namespace bp::opencl {

using plugin::TensorView;

enum class DTypes {
  Any,
  NonBool,   // sub, neg, relu, matrix products, arange
  Floating,  // div, exp, ..., mean, softmax, layer norm
};

// Throws BP_STATUS_UNIMPLEMENTED when `op` has no kernel for `dtype` ("sub: not implemented for
// 'Bool'", as the CPU backend says) or `device` cannot hold it (Double without cl_khr_fp64).
void require_supported(const Device& device, std::string_view op, DType dtype, DTypes supported);

// The dtypes the core's meta step promises, checked as every backend checks them.
using plugin::require_dtype;
using plugin::require_widening_dtype;

// The dtype's name in kernel names: "float32", "bfloat16", "bool".
std::string_view kernel_dtype_name(DType dtype);

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
