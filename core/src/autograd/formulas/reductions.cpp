#include "autograd/formulas.h"

#include "tensor/shape.h"

#include <algorithm>

namespace bp::autograd::formulas {

namespace {

// The dims a reduction over `dim` removed, wrapped and in increasing order; every dim when
// `dim` is absent or empty.
std::vector<int64_t> reduced_dims(OptionalIntArrayRef dim, size_t rank) {
  std::vector<int64_t> dims;
  if (!dim || (*dim).empty()) {
    for (size_t d = 0; d < rank; ++d) dims.push_back(static_cast<int64_t>(d));
    return dims;
  }
  for (int64_t d : *dim) {
    dims.push_back(bp::detail::wrap_dim("backward", d, static_cast<int64_t>(rank)));
  }
  std::sort(dims.begin(), dims.end());
  return dims;
}

// `reduced` (a reduction's result without keepdim) with the reduced dims put back as size 1.
Tensor with_kept_dims(const Tensor& reduced, const std::vector<int64_t>& dims, bool keepdim) {
  if (keepdim) return reduced;
  Tensor kept = reduced;
  for (int64_t d : dims) kept = kept.unsqueeze(d);
  return kept;
}

}  // namespace

Tensor sum_backward(const Tensor& grad, IntArrayRef self_sizes, OptionalIntArrayRef dim,
                    bool keepdim) {
  const std::vector<int64_t> dims = reduced_dims(dim, self_sizes.size());
  return with_kept_dims(grad, dims, keepdim).expand(self_sizes);
}

Tensor mean_backward(const Tensor& grad, IntArrayRef self_sizes, OptionalIntArrayRef dim,
                     bool keepdim) {
  int64_t count = 1;
  for (int64_t d : reduced_dims(dim, self_sizes.size())) count *= self_sizes[d];
  return sum_backward(grad, self_sizes, dim, keepdim) / count;
}

Tensor amax_backward(const Tensor& grad, const Tensor& self, const Tensor& result, IntArrayRef dim,
                     bool keepdim) {
  const std::vector<int64_t> dims = reduced_dims(dim, self.sizes().size());
  const Tensor mask = eq(self, with_kept_dims(result, dims, keepdim)).to(grad.dtype());
  const Tensor count = sum(mask, dims, /*keepdim=*/true);
  return with_kept_dims(grad, dims, keepdim) * mask / count;
}

Tensor max_dim_backward(const Tensor& grad, int64_t dim, const Tensor& indices,
                        IntArrayRef self_sizes, bool keepdim) {
  const int64_t rank = static_cast<int64_t>(self_sizes.size());
  const int64_t d = bp::detail::wrap_dim("max.dim backward", dim, rank);
  if (rank == 0) return grad;
  std::vector<int64_t> position_shape(static_cast<size_t>(rank), 1);
  position_shape[d] = self_sizes[d];
  const Tensor positions = arange(self_sizes[d], kInt64, grad.device()).view(position_shape);
  const std::vector<int64_t> dims{d};
  const Tensor chosen = eq(positions, with_kept_dims(indices, dims, keepdim));
  return where(chosen, with_kept_dims(grad, dims, keepdim), zeros({}, grad.dtype(), grad.device()));
}

}  // namespace bp::autograd::formulas
