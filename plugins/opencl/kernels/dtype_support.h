// Which dtypes each op's kernels run on (the CPU backend's rules), and the dtypes the core's
// meta step promises, checked as every backend checks them.
#pragma once

#include "runtime/device.h"

#include <backplane/sdk/dtype_promises.hpp>

#include <string_view>

namespace bp::opencl {

enum class DTypes {
  Any,
  NonBool,   // sub, neg, relu, matrix products, arange
  Floating,  // div, exp, ..., mean, softmax, layer norm
};

// Throws BP_STATUS_UNIMPLEMENTED when `op` has no kernel for `dtype` ("sub: not implemented for
// 'Bool'", as the CPU backend says) or `device` cannot hold it (Double without cl_khr_fp64).
void require_supported(const Device& device, std::string_view op, DType dtype, DTypes supported);

using plugin::require_dtype;
using plugin::require_widening_dtype;

}  // namespace bp::opencl
