// max_pool2d: its kernel op where no gradient is recorded, and max_pool2d_with_indices where one
// is, so that the backward pass reads the positions of the maxima rather than finding them again.
#include <backplane/backplane.h>

#include <core_generated/CompositeFunctions.h>

namespace bp::composite {

Tensor max_pool2d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride,
                  IntArrayRef padding, IntArrayRef dilation, bool ceil_mode) {
  if (!self.defined() || (self.requires_grad() && is_grad_enabled())) {
    return std::get<0>(
        bp::max_pool2d_with_indices(self, kernel_size, stride, padding, dilation, ceil_mode));
  }
  Tensor out = bp::empty({0}, self.dtype(), self.device());
  return bp::max_pool2d_out(out, self, kernel_size, stride, padding, dilation, ceil_mode);
}

}  // namespace bp::composite
