// fill_ and arange: kernels of kernels/elementwise.cl that write values computed from scalars.
#include "OpenCLNativeFunctions.h"

#include "dtype_support.h"
#include "kernel_launch.h"

namespace bp::opencl {

// The value converts as the CPU backend's value.to<T>() does (Half and BFloat16 through float).
void fill__Scalar(const TensorView& self, const Scalar& value) {
  Device& device = device_of(self);
  require_supported(device, "fill_", self.dtype(), DTypes::Any);
  launch_elementwise(device, device.program(KernelSource::Elementwise, self.dtype()), "fill",
                     "fill_", self.sizes(), {operand_of(self)},
                     KernelArgs().add(compute_scalar(self.dtype(), value)));
}

// out[i] = start + i * step over out's elements in row-major order; the meta step sized out.
void arange_start_out(const Scalar& start, const Scalar& /*end: out's size encodes it*/,
                      const Scalar& step, const TensorView& out) {
  Device& device = device_of(out);
  require_supported(device, "arange", out.dtype(), DTypes::NonBool);
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
