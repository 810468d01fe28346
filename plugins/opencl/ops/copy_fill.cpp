// copy_, cat, fill_ and arange. copy_ and cat are strided copies between any two dtypes
// (kernels/copy_elements.h); fill_ and arange are kernels of kernels/elementwise.cl that write
// values computed from scalars.
#include "OpenCLNativeFunctions.h"

#include "kernels/copy_elements.h"
#include "kernels/scalar_args.h"
#include "runtime/kernel_launch.h"

#include <cstdint>
#include <span>

namespace bp::opencl {

void copy_(const TensorView& self, const TensorView& src,
           bool /*non_blocking: the queue keeps order*/) {
  plugin::require_dtype_of<plugin::kernel_dtypes::copy_>(self.dtype());
  const auto src_strides = plugin::broadcast_strides("copy_", src, self.sizes());
  copy_elements(device_of(self), "copy_", self.sizes(), {operand_of(self), self.dtype()},
                {{buffer_of(src), src_strides.span()}, src.dtype()});
}

// Each input is copied into its slice of out along `dim`, converted to out's dtype (the meta
// step computed the promoted dtype and out's shape).
void cat_out(std::span<const TensorView> tensors, int64_t dim, const TensorView& out) {
  plugin::require_dtype_of<plugin::kernel_dtypes::cat_out>(out.dtype());
  dim = wrap_dim("cat", dim, out.dim());
  Device& device = device_of(out);
  const Buffer out_buffer = buffer_of(out);
  int64_t offset = 0;  // where the next input starts along dim
  for (const TensorView& tensor : tensors) {
    // An empty input contributes nothing; this also skips PyTorch's legacy 1-d empty tensors,
    // whose shape need not match the others.
    if (tensor.numel() == 0) continue;
    const Buffer slice{out_buffer.mem, out_buffer.base + offset * out.stride(dim)};
    copy_elements(device, "cat", tensor.sizes(), {{slice, out.strides()}, out.dtype()},
                  {operand_of(tensor), tensor.dtype()});
    offset += tensor.size(dim);
  }
}

// The value converts as the CPU backend's value.to<T>() does (Half and BFloat16 through float).
void fill__Scalar(const TensorView& self, const Scalar& value) {
  Device& device = device_of(self);
  plugin::require_dtype_of<plugin::kernel_dtypes::fill__Scalar>(self.dtype());
  device.require_double_precision_for("fill_", self.dtype());
  launch_elementwise(device, device.program(KernelSource::Elementwise, self.dtype()), "fill",
                     "fill_", self.sizes(), {operand_of(self)},
                     KernelArgs().add(compute_scalar(self.dtype(), value)));
}

// out[i] = start + i * step over out's elements in row-major order; the meta step sized out.
void arange_start_out(const Scalar& start, const Scalar& /*end: out's size encodes it*/,
                      const Scalar& step, const TensorView& out) {
  Device& device = device_of(out);
  plugin::require_dtype_of<plugin::kernel_dtypes::arange_start_out>(out.dtype());
  device.require_double_precision_for("arange", out.dtype());
  // The kernel numbers elements by the work-item index, which a launch split over more than 8
  // dimensions would restart; arange's output is one-dimensional.
  plugin::check(out.dim() == 1, "arange: the output must be one-dimensional");
  launch_elementwise(device, device.program(KernelSource::Elementwise, out.dtype()), "arange",
                     "arange", out.sizes(), {operand_of(out)},
                     KernelArgs()
                         .add(accumulator_scalar(device, out.dtype(), start))
                         .add(accumulator_scalar(device, out.dtype(), step)),
                     ElementIndex::Used);
}

}  // namespace bp::opencl
