// Helpers that the gradient formulas of core/ops/derivatives.yaml call, where a formula is more
// than one expression. They compute with public ops and run inside backward, where grad mode
// is off.
#pragma once

#include <backplane/backplane.h>

#include <cstdint>
#include <optional>
#include <tuple>
#include <vector>

namespace bp::autograd::formulas {

// Broadcasting, undone: whether `sizes` broadcasts to `target`, and `grad` summed over the
// dims that broadcasting added or stretched, back to `sizes`.
bool is_expandable_to(IntArrayRef sizes, IntArrayRef target);
Tensor sum_to(const Tensor& grad, IntArrayRef sizes);

// --- pointwise -------------------------------------------------------------------------------

// grad * factor, without a kernel call when the factor is 1 (add's and addmm's alpha and beta).
Tensor scale_by(const Tensor& grad, const Scalar& factor);

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

// --- layers ----------------------------------------------------------------------------------

Tensor index_select_backward(const Tensor& grad, IntArrayRef self_sizes, int64_t dim,
                             const Tensor& index);
// rms_norm's gradients of input and weight (undefined without a weight).
std::tuple<Tensor, Tensor> rms_norm_backward(const Tensor& grad, const Tensor& input,
                                             IntArrayRef normalized_shape,
                                             const std::optional<Tensor>& weight,
                                             std::optional<double> eps);
// _addmm_activation's gradients of self, mat1 and mat2: the activation's input is computed
// again rather than saved.
std::tuple<Tensor, Tensor, Tensor> addmm_activation_backward(const Tensor& grad, const Tensor& self,
                                                             const Tensor& mat1, const Tensor& mat2,
                                                             const Scalar& beta,
                                                             const Scalar& alpha, bool use_gelu,
                                                             const Tensor& result);
// The fused attention kernel's gradients of query, key and value, from the attention
// probabilities computed again.
std::tuple<Tensor, Tensor, Tensor> fused_attention_backward(const Tensor& grad, const Tensor& query,
                                                            const Tensor& key, const Tensor& value,
                                                            bool is_causal,
                                                            std::optional<double> scale);

}  // namespace bp::autograd::formulas
