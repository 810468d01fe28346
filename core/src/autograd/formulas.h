// Helpers that the gradient formulas of core/ops/derivatives.yaml call, where a formula is more
// than one expression. They compute with public ops and run inside backward, where grad mode
// is off.
#pragma once

#include <backplane/backplane.h>

#include <cstdint>
#include <optional>
#include <vector>

namespace bp::autograd::formulas {

// Broadcasting, undone: whether `sizes` broadcasts to `target`, and `grad` summed over the
// dims that broadcasting added or stretched, back to `sizes`.
bool is_expandable_to(IntArrayRef sizes, IntArrayRef target);
Tensor sum_to(const Tensor& grad, IntArrayRef sizes);

// --- pointwise -------------------------------------------------------------------------------

Tensor sgn(const Tensor& self);  // -1, 0 or 1 in self's dtype
// The part of maximum's (minimum's) gradient that goes to `self`; ties split it evenly between
// the inputs, as PyTorch does. The part for `other` is the same call with the inputs swapped.
Tensor maximum_backward(const Tensor& grad, const Tensor& self, const Tensor& other);
Tensor minimum_backward(const Tensor& grad, const Tensor& self, const Tensor& other);
Tensor where_backward_self(const Tensor& grad, const Tensor& condition);
Tensor where_backward_other(const Tensor& grad, const Tensor& condition);
Tensor sigmoid_backward(const Tensor& grad, const Tensor& result);
Tensor tanh_backward(const Tensor& grad, const Tensor& result);
Tensor silu_backward(const Tensor& grad, const Tensor& self);

// --- reductions ------------------------------------------------------------------------------

// `grad` of a reduction over `dim` (every dim when absent or empty) spread back over the
// input's shape.
Tensor sum_backward(const Tensor& grad, IntArrayRef self_sizes, OptionalIntArrayRef dim,
                    bool keepdim);
Tensor mean_backward(const Tensor& grad, IntArrayRef self_sizes, OptionalIntArrayRef dim,
                     bool keepdim);
// amax's gradient goes to every maximum of a slice in equal parts.
Tensor amax_backward(const Tensor& grad, const Tensor& self, const Tensor& result, IntArrayRef dim,
                     bool keepdim);
// max.dim's gradient goes to the element `indices` names.
Tensor max_dim_backward(const Tensor& grad, int64_t dim, const Tensor& indices,
                        IntArrayRef self_sizes, bool keepdim);

// --- shapes ----------------------------------------------------------------------------------

std::vector<Tensor> cat_backward(const Tensor& grad, const std::vector<DimVector>& tensors_sizes,
                                 int64_t dim);
Tensor permute_backward(const Tensor& grad, IntArrayRef dims);
Tensor slice_backward(const Tensor& grad, IntArrayRef self_sizes, int64_t dim,
                      std::optional<int64_t> start, std::optional<int64_t> end, int64_t step);
Tensor select_backward(const Tensor& grad, IntArrayRef self_sizes, int64_t dim, int64_t index);

}  // namespace bp::autograd::formulas
