// The core's check, before any kernel runs, that an op's declared tensor argument has a dtype
// the op takes (ops.yaml's `dtypes:`, as <backplane/sdk/kernel_dtypes.h> states it). Every
// backend then gets only those dtypes, and the caller one message for every op, the same text
// that a plugin's own refusal gives.
#pragma once

#include <backplane/error.h>
#include <backplane/sdk/dtype.hpp>
#include <backplane/sdk/dtype_set.hpp>
#include <backplane/sdk/kernel_dtypes.h>
#include <backplane/tensor.h>

namespace bp::detail {

template <typename Kernel>
[[noreturn, gnu::cold, gnu::noinline]] void refuse_kernel_dtype(DType dtype) {
  throw Error(plugin::dtype_refusal(Kernel::op, Kernel::argument, Kernel::dtypes, dtype));
}

// `Kernel` is the op's type in bp::plugin::kernel_dtypes; `declared` its declared argument.
template <typename Kernel>
void check_kernel_dtype(const Tensor& declared) {
  if (!Kernel::dtypes.contains(declared.dtype())) [[unlikely]] {
    refuse_kernel_dtype<Kernel>(declared.dtype());
  }
}

}  // namespace bp::detail
