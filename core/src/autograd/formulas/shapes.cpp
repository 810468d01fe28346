#include "autograd/formulas.h"

#include "tensor/shape.h"

#include <limits>

namespace bp::autograd::formulas {

std::vector<Tensor> cat_backward(const Tensor& grad, const std::vector<DimVector>& tensors_sizes,
                                 int64_t dim) {
  const int64_t d = bp::detail::wrap_dim("cat backward", dim, grad.dim());
  std::vector<Tensor> grads;
  grads.reserve(tensors_sizes.size());
  int64_t offset = 0;
  for (const DimVector& sizes : tensors_sizes) {
    // cat skips 1-D empty tensors whatever the dim; their gradient is empty too.
    if (sizes.size() == 1 && sizes[0] == 0 && grad.dim() != 1) {
      grads.push_back(zeros({0}, grad.dtype(), grad.device()));
      continue;
    }
    grads.push_back(grad.slice(d, offset, offset + sizes[d]));
    offset += sizes[d];
  }
  return grads;
}

Tensor permute_backward(const Tensor& grad, IntArrayRef dims) {
  std::vector<int64_t> inverse(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) {
    inverse[bp::detail::wrap_dim("permute backward", dims[i], grad.dim())] =
        static_cast<int64_t>(i);
  }
  return grad.permute(inverse);
}

Tensor slice_backward(const Tensor& grad, IntArrayRef self_sizes, int64_t dim,
                      std::optional<int64_t> start, std::optional<int64_t> end, int64_t step) {
  Tensor grad_input = zeros(self_sizes, grad.dtype(), grad.device());
  grad_input.slice(dim, start.value_or(0), end.value_or(std::numeric_limits<int64_t>::max()), step)
      .copy_(grad);
  return grad_input;
}

Tensor select_backward(const Tensor& grad, IntArrayRef self_sizes, int64_t dim, int64_t index) {
  Tensor grad_input = zeros(self_sizes, grad.dtype(), grad.device());
  grad_input.select(dim, index).copy_(grad);
  return grad_input;
}

}  // namespace bp::autograd::formulas
