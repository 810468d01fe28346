// copy_, fill_, cat and arange: writing into an existing tensor of any strides. cat copies
// each input into its slice of out along `dim`, converting its dtype to out's (the meta step
// computed the promoted dtype and out's shape). arange writes out[i] = start + i * step over
// out's elements in row-major order (the meta step sized out), computing each value from i
// rather than adding step repeatedly, so that rounding errors do not accumulate.
#include "CPUNativeFunctions.h"

#include "kernels/copy_elements.h"
#include "kernels/parallel_elements.h"
#include "kernels/strided_loop.h"

#include <backplane/sdk/reduction_dims.hpp>

#include <cstdint>
#include <span>
#include <type_traits>

namespace bp::cpu {

void copy_(const TensorView& self, const TensorView& src,
           bool /*non_blocking: host copies are synchronous*/) {
  const DimValues<int64_t> src_strides = broadcast_strides("copy_", src, self.sizes());
  copy_elements(self.sizes(), elements_of(self),
                {src.data<void>(), src.dtype(), src_strides.span()});
}

void fill__Scalar(const TensorView& self, const bp::Scalar& value) {
  plugin::visit_dtype<kernel_dtypes::fill__Scalar>(self.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T filler = value.to<T>();
    parallel_map_elements(
        self.sizes(), [filler]() { return filler; }, output_operand<T>(self));
  });
}

void cat_out(std::span<const TensorView> tensors, int64_t dim, const TensorView& out) {
  dim = wrap_dim("cat", dim, out.dim());
  char* const out_bytes = out.data<char>();
  const int64_t slice_step_bytes =
      out.stride(dim) * static_cast<int64_t>(element_size(out.dtype()));
  int64_t offset = 0;  // where the next input starts along dim
  for (const TensorView& tensor : tensors) {
    // An empty input contributes nothing; this also skips PyTorch's legacy 1-d empty tensors,
    // whose shape need not match the others.
    if (tensor.numel() == 0) continue;
    copy_elements(tensor.sizes(),
                  {out_bytes + offset * slice_step_bytes, out.dtype(), out.strides()},
                  elements_of(tensor));
    offset += tensor.size(dim);
  }
}

void arange_start_out(const bp::Scalar& start, const bp::Scalar& /*end: out's size encodes it*/,
                      const bp::Scalar& step, const TensorView& out) {
  plugin::visit_dtype<kernel_dtypes::arange_start_out>(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    // double for floating dtypes, int64 for integers, as PyTorch computes.
    using Value = std::conditional_t<std::is_floating_point_v<compute_t<T>>, double, int64_t>;
    const Value first = start.to<Value>();
    const Value increment = step.to<Value>();
    T* data = out.data<T>();
    int64_t index = 0;
    const StridedLoop<1> loop(out.sizes(), {out.strides()});
    loop.for_each_row([&](const Offsets<1>& at, const Offsets<1>& stride, int64_t length) {
      for (int64_t i = 0; i < length; ++i, ++index) {
        data[at[0] + i * stride[0]] = static_cast<T>(first + static_cast<Value>(index) * increment);
      }
    });
  });
}

}  // namespace bp::cpu
