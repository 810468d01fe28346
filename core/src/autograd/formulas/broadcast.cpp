#include "autograd/formulas.h"

namespace bp::autograd::formulas {

bool is_expandable_to(IntArrayRef sizes, IntArrayRef target) {
  if (sizes.size() > target.size()) return false;
  const size_t lead = target.size() - sizes.size();
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] != target[lead + i] && sizes[i] != 1) return false;
  }
  return true;
}

Tensor sum_to(const Tensor& grad, IntArrayRef sizes) {
  if (grad.sizes() == sizes) return grad;
  const IntArrayRef grad_sizes = grad.sizes();
  const size_t lead = grad_sizes.size() - sizes.size();
  std::vector<int64_t> dims;
  for (size_t d = 0; d < grad_sizes.size(); ++d) {
    if (d < lead || (sizes[d - lead] == 1 && grad_sizes[d] != 1)) {
      dims.push_back(static_cast<int64_t>(d));
    }
  }
  const Tensor summed = dims.empty() ? grad : sum(grad, dims, /*keepdim=*/true);
  return summed.reshape(sizes);
}

}  // namespace bp::autograd::formulas
