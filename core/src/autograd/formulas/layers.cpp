#include "autograd/formulas.h"

#include <cmath>
#include <limits>

namespace bp::autograd::formulas {

namespace {

// rms_norm's default eps, as PyTorch's: the dtype's machine epsilon.
double machine_epsilon(DType dtype) {
  switch (dtype) {
    case kFloat64: return std::numeric_limits<double>::epsilon();
    case kFloat16: return 0.0009765625;
    case kBFloat16: return 0.0078125;
    default: return std::numeric_limits<float>::epsilon();
  }
}

std::vector<int64_t> last_dims(int64_t count, int64_t rank) {
  std::vector<int64_t> dims;
  for (int64_t d = rank - count; d < rank; ++d) dims.push_back(d);
  return dims;
}

}  // namespace

Tensor index_select_backward(const Tensor& grad, IntArrayRef self_sizes, int64_t dim,
                             const Tensor& index) {
  return index_add(zeros(self_sizes, grad.dtype(), grad.device()), dim, index, grad);
}

std::tuple<Tensor, Tensor> rms_norm_backward(const Tensor& grad, const Tensor& input,
                                             IntArrayRef normalized_shape,
                                             const std::optional<Tensor>& weight,
                                             std::optional<double> eps) {
  const std::vector<int64_t> dims =
      last_dims(static_cast<int64_t>(normalized_shape.size()), input.dim());
  const double epsilon = eps.value_or(machine_epsilon(input.dtype()));
  const Tensor rstd = div(ones({}, input.dtype(), input.device()),
                          sqrt(mean(input * input, dims, /*keepdim=*/true) + epsilon));
  const bool has_weight = weight && weight->defined();
  const Tensor scaled_grad = has_weight ? grad * *weight : grad;
  const Tensor grad_input =
      rstd * scaled_grad -
      input * (rstd * rstd * rstd) * mean(scaled_grad * input, dims, /*keepdim=*/true);
  Tensor grad_weight;
  if (has_weight) grad_weight = sum_to(grad * input * rstd, weight->sizes());
  return {grad_input, grad_weight};
}

std::tuple<Tensor, Tensor, Tensor> addmm_activation_backward(const Tensor& grad, const Tensor& self,
                                                             const Tensor& mat1, const Tensor& mat2,
                                                             const Scalar& beta,
                                                             const Scalar& alpha, bool use_gelu,
                                                             const Tensor& result) {
  const Tensor grad_sum = use_gelu
                              ? gelu_backward(grad, addmm(self, mat1, mat2, beta, alpha), "tanh")
                              : threshold_backward(grad, result, 0);
  return {grad_sum * beta, mm(grad_sum, mat2.transpose(0, 1)) * alpha,
          mm(mat1.transpose(0, 1), grad_sum) * alpha};
}

std::tuple<Tensor, Tensor, Tensor> fused_attention_backward(const Tensor& grad, const Tensor& query,
                                                            const Tensor& key, const Tensor& value,
                                                            bool is_causal,
                                                            std::optional<double> scale) {
  const double factor = scale.value_or(1.0 / std::sqrt(static_cast<double>(query.size(-1))));
  Tensor scores = matmul(query * factor, key.transpose(-2, -1));
  if (is_causal) {
    const int64_t target = scores.size(-2);
    const int64_t source = scores.size(-1);
    const Tensor future = gt(arange(source, kInt64, scores.device()).view({1, source}),
                             arange(target, kInt64, scores.device()).view({target, 1}));
    scores = where(
        future, full({}, -std::numeric_limits<double>::infinity(), scores.dtype(), scores.device()),
        scores);
  }
  const Tensor probabilities = softmax(scores, -1);
  const Tensor grad_value = matmul(probabilities.transpose(-2, -1), grad);
  const Tensor grad_probabilities = matmul(grad, value.transpose(-2, -1));
  const Tensor grad_scores =
      _softmax_backward_data(grad_probabilities, probabilities, -1, probabilities.dtype());
  return {matmul(grad_scores, key) * factor, matmul(grad_scores.transpose(-2, -1), query) * factor,
          grad_value};
}

}  // namespace bp::autograd::formulas
