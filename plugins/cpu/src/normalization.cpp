// softmax, log_softmax and layer norm: kernels that normalise groups of elements.
#include "CPUNativeFunctions.h"

#include "dtypes.h"
#include "multiversion.h"
#include "reduction.h"
#include "strided_loop.h"
#include "vector_math.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace bp::cpu {
namespace {

// softmax (or log_softmax, when `log`) of x[0..n) into y[0..n); y may be x. Subtracting the
// maximum first keeps exp from overflowing. The maximum skips NaN, which then makes its exp,
// the sum and so every result NaN.
template <typename C>
BP_CPU_MULTIVERSIONED void softmax_span(const C* x, C* y, int64_t n, bool log,
                                        const NextRows<C>& next) {
  const C max = max_ignoring_nan(x, n);
  const double sum = exp_shifted_and_sum(x, y, n, max, next);
  if (log) {
    const C log_sum = static_cast<C>(std::log(sum));
    for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - max) - log_sum;
  } else {
    const C scale = static_cast<C>(1.0 / sum);
    for (int64_t i = 0; i < n; ++i) y[i] *= scale;
  }
}

// softmax or log_softmax along `dim`, computed in the compute type of out's dtype, which the
// meta step has given self too.
void softmax_into(std::string_view op, const TensorView& self, int64_t dim, const TensorView& out,
                  bool log) {
  require_dtype(op, "self", self, out.dtype());
  const ReductionLoops<2> loops(self.sizes(), {self.strides(), out.strides()},
                                single_reduced_dim(op, self.dim(), dim));
  visit_supported<FloatingDType>(op, out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    for_each_group_span(loops, self.data<const T>(), out.data<T>(),
                        [&](const Offsets<2>&, const C* x, C* y, int64_t n,
                            const NextRows<C>& next) { softmax_span(x, y, n, log, next); });
  });
}

// A group's mean and 1 / sqrt(variance + eps), from two passes in double (the mean, then the
// mean squared deviation), which stays accurate where E[x^2] - E[x]^2 would cancel.
struct Moments {
  double mean;
  double rstd;
};

template <typename C>
BP_CPU_MULTIVERSIONED Moments moments_of(const C* x, int64_t n, double eps) {
  const double count = static_cast<double>(n);
  PartialSums<double> sums;
  sums.add(x, n);
  const double mean = sums.total() / count;
  PartialSums<double> squares;
  squares.add(x, n, [mean](double value) {
    const double deviation = value - mean;
    return deviation * deviation;
  });
  return {mean, 1.0 / std::sqrt(squares.total() / count + eps)};
}

// 1 / sqrt(mean(x^2) + eps), the mean in double.
template <typename C>
BP_CPU_MULTIVERSIONED double reciprocal_root_mean_square(const C* x, int64_t n, double eps) {
  PartialSums<double> squares;
  squares.add(x, n, [](double value) { return value * value; });
  return 1.0 / std::sqrt(squares.total() / static_cast<double>(n) + eps);
}

// y = (x - mean) * rstd * weight + bias over one group, in double; weight and bias may be
// absent (null).
template <typename C>
BP_CPU_MULTIVERSIONED void normalize_span(const C* x, C* y, int64_t n, Moments moments,
                                          const C* weight, const C* bias,
                                          const NextRows<C>& next) {
  const auto normalize = [&](auto with_weight, auto with_bias) {
    for_each_block_prefetching(n, next, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        double value = (static_cast<double>(x[i]) - moments.mean) * moments.rstd;
        if constexpr (with_weight) value *= static_cast<double>(weight[i]);
        if constexpr (with_bias) value += static_cast<double>(bias[i]);
        y[i] = static_cast<C>(value);
      }
    });
  };
  using Yes = std::true_type;
  using No = std::false_type;
  if (weight && bias) {
    normalize(Yes{}, Yes{});
  } else if (weight) {
    normalize(Yes{}, No{});
  } else if (bias) {
    normalize(No{}, Yes{});
  } else {
    normalize(No{}, No{});
  }
}

// An operand that is the same for every group (layer norm's weight and bias), as one
// contiguous array of the compute type: the tensor's memory where that is one already, else a
// copy in `copy`.
template <typename C, typename T, size_t N>
const C* per_group_operand(const ReductionLoops<N>& loops, size_t k, const T* data,
                           std::vector<C>& copy) {
  if (data == nullptr) return nullptr;
  if constexpr (!kConvertsToCompute<T>) {
    if (loops.groups_contiguous_in(k)) return data;
  }
  copy.resize(static_cast<size_t>(loops.group_size()));
  gather_group(loops, Offsets<N>{}, k, data, copy.data());
  return copy.data();
}

}  // namespace

void softmax_int_out(const TensorView& self, int64_t dim,
                     std::optional<bp::DType> /*dtype: out has it*/, const TensorView& out) {
  softmax_into("softmax", self, dim, out, /*log=*/false);
}

void log_softmax_int_out(const TensorView& self, int64_t dim,
                         std::optional<bp::DType> /*dtype: out has it*/, const TensorView& out) {
  softmax_into("log_softmax", self, dim, out, /*log=*/true);
}

namespace {

// Layer norm and rms norm: each group is one index of the leading dimensions; its elements
// span the trailing `normalized_shape`, which the meta step has checked against the input's
// shape, and given weight and bias the input's dtype.
DimValues<bool> normalized_dims(std::string_view op, const TensorView& input,
                                std::span<const int64_t> normalized_shape) {
  const int64_t ndim = input.dim();
  const auto count = static_cast<int64_t>(normalized_shape.size());
  plugin::check(count <= ndim,
                std::string(op) + ": normalized_shape has more dimensions than the input");
  DimValues<bool> normalized(static_cast<size_t>(ndim), false);
  for (int64_t d = ndim - count; d < ndim; ++d) normalized[static_cast<size_t>(d)] = true;
  return normalized;
}

// Strides that read an optional weight or bias over the input's shape; an absent one is never
// read, and zero strides stand in for it.
DimValues<int64_t> parameter_strides(std::string_view op, std::string_view name,
                                     const TensorView* parameter, const TensorView& input) {
  if (parameter == nullptr) return DimValues<int64_t>(static_cast<size_t>(input.dim()), 0);
  require_dtype(op, name, *parameter, input.dtype());
  return broadcast_strides(op, *parameter, input.sizes());
}

}  // namespace

void native_layer_norm_out(const TensorView& input, std::span<const int64_t> normalized_shape,
                           const TensorView* weight, const TensorView* bias, double eps,
                           const TensorView& out0, const TensorView& out1, const TensorView& out2) {
  constexpr std::string_view op = "native_layer_norm";
  for (const TensorView* output : {&out0, &out1, &out2})
    require_dtype(op, "outputs", *output, input.dtype());
  const DimValues<bool> normalized = normalized_dims(op, input, normalized_shape);
  const DimValues<int64_t> mean_strides =
      reduced_output_strides(out1, normalized, /*keepdim=*/true);
  const DimValues<int64_t> rstd_strides =
      reduced_output_strides(out2, normalized, /*keepdim=*/true);
  const DimValues<int64_t> weight_strides = parameter_strides(op, "weight", weight, input);
  const DimValues<int64_t> bias_strides = parameter_strides(op, "bias", bias, input);
  enum LayerNormOperand { kInput, kOut, kMean, kRstd, kWeight, kBias, kOperands };
  const ReductionLoops<kOperands> loops(
      input.sizes(),
      {input.strides(), out0.strides(), mean_strides.span(), rstd_strides.span(),
       weight_strides.span(), bias_strides.span()},
      normalized);

  visit_supported<FloatingDType>(op, input.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    std::vector<C> weight_copy, bias_copy;
    const C* w = per_group_operand(loops, kWeight, weight ? weight->data<const T>() : nullptr,
                                   weight_copy);
    const C* b =
        per_group_operand(loops, kBias, bias ? bias->data<const T>() : nullptr, bias_copy);
    T* mean = out1.data<T>();
    T* rstd = out2.data<T>();
    for_each_group_span(loops, input.data<const T>(), out0.data<T>(),
                        [&](const Offsets<kOperands>& group, const C* x, C* y, int64_t n,
                            const NextRows<C>& next) {
                          const Moments moments = moments_of(x, n, eps);
                          normalize_span(x, y, n, moments, w, b, next);
                          mean[group[kMean]] = static_cast<T>(moments.mean);
                          rstd[group[kRstd]] = static_cast<T>(moments.rstd);
                        });
  });
}

// y = x / sqrt(mean(x^2) + eps) * weight over each group, the mean of squares in double. eps
// absent is the machine epsilon of the compute type, as PyTorch's default.
void rms_norm_out(const TensorView& input, std::span<const int64_t> normalized_shape,
                  const TensorView* weight, std::optional<double> eps, const TensorView& out) {
  constexpr std::string_view op = "rms_norm";
  require_dtype(op, "out", out, input.dtype());
  const DimValues<bool> normalized = normalized_dims(op, input, normalized_shape);
  const DimValues<int64_t> weight_strides = parameter_strides(op, "weight", weight, input);
  enum RmsNormOperand { kInput, kOut, kWeight, kOperands };
  const ReductionLoops<kOperands> loops(
      input.sizes(), {input.strides(), out.strides(), weight_strides.span()}, normalized);

  visit_supported<FloatingDType>(op, input.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    const double epsilon = eps.value_or(std::numeric_limits<C>::epsilon());
    std::vector<C> weight_copy;
    const C* w = per_group_operand(loops, kWeight, weight ? weight->data<const T>() : nullptr,
                                   weight_copy);
    for_each_group_span(loops, input.data<const T>(), out.data<T>(),
                        [&](const Offsets<kOperands>&, const C* x, C* y, int64_t n,
                            const NextRows<C>& next) {
                          const Moments moments{0, reciprocal_root_mean_square(x, n, epsilon)};
                          normalize_span(x, y, n, moments, w, static_cast<const C*>(nullptr),
                                         next);
                        });
  });
}

}  // namespace bp::cpu
