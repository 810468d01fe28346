// softmax, log_softmax and layer norm: kernels that normalise groups of elements.
#include "CPUNativeFunctions.h"

#include "dtypes.h"
#include "reduction.h"
#include "strided_loop.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace bp::cpu {
namespace {

// softmax or log_softmax along `dim`, computed in the compute type of out's dtype, which the
// meta step has given self too. Subtracting each group's maximum first keeps exp from
// overflowing.
void softmax_into(std::string_view op, const TensorView& self, int64_t dim, const TensorView& out,
                  bool log) {
  require_dtype(op, "self", self, out.dtype());
  const ReductionLoops<2> loops(self.sizes(), {self.strides(), out.strides()},
                                single_reduced_dim(op, self.dim(), dim));
  visit_supported<FloatingDType>(op, out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    const T* input = self.data<const T>();
    T* output = out.data<T>();
    loops.for_each_group([&](const Offsets<2>& group) {
      C max = -std::numeric_limits<C>::infinity();
      loops.for_each_in_group(group, [&](const Offsets<2>& at, int64_t) {
        max = max_propagating_nan(max, static_cast<C>(input[at[0]]));
      });
      C sum = 0;
      loops.for_each_in_group(group, [&](const Offsets<2>& at, int64_t) {
        sum += std::exp(static_cast<C>(input[at[0]]) - max);
      });
      const C log_sum = std::log(sum);
      loops.for_each_in_group(group, [&](const Offsets<2>& at, int64_t) {
        const C shifted = static_cast<C>(input[at[0]]) - max;
        output[at[1]] = static_cast<T>(log ? shifted - log_sum : std::exp(shifted) / sum);
      });
    });
  });
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

// Each group is one index of the leading dimensions; its elements span the trailing
// `normalized_shape`. The meta step has given weight, bias and the three outputs input's dtype.
// Statistics use two passes in double (mean, then the mean squared deviation), which stays
// accurate where E[x^2] - E[x]^2 would cancel.
void native_layer_norm_out(const TensorView& input, std::span<const int64_t> normalized_shape,
                           const TensorView* weight, const TensorView* bias, double eps,
                           const TensorView& out0, const TensorView& out1, const TensorView& out2) {
  constexpr std::string_view op = "native_layer_norm";
  const int64_t ndim = input.dim();
  const auto normalized_dims = static_cast<int64_t>(normalized_shape.size());
  plugin::check(normalized_dims <= ndim,
                std::string(op) + ": normalized_shape has more dimensions than the input");
  for (const TensorView* output : {&out0, &out1, &out2})
    require_dtype(op, "outputs", *output, input.dtype());
  if (weight) require_dtype(op, "weight", *weight, input.dtype());
  if (bias) require_dtype(op, "bias", *bias, input.dtype());

  DimValues<bool> normalized(static_cast<size_t>(ndim), false);
  for (int64_t d = ndim - normalized_dims; d < ndim; ++d) normalized[static_cast<size_t>(d)] = true;
  const DimValues<int64_t> mean_strides =
      reduced_output_strides(out1, normalized, /*keepdim=*/true);
  const DimValues<int64_t> rstd_strides =
      reduced_output_strides(out2, normalized, /*keepdim=*/true);
  // An absent weight or bias is never read; zero strides stand in for it.
  const DimValues<int64_t> unused_strides(static_cast<size_t>(ndim), 0);
  const DimValues<int64_t> weight_strides =
      weight ? broadcast_strides(op, *weight, input.sizes()) : unused_strides;
  const DimValues<int64_t> bias_strides =
      bias ? broadcast_strides(op, *bias, input.sizes()) : unused_strides;
  enum LayerNormOperand { kInput, kOut, kMean, kRstd, kWeight, kBias, kOperands };
  const ReductionLoops<kOperands> loops(
      input.sizes(),
      {input.strides(), out0.strides(), mean_strides.span(), rstd_strides.span(),
       weight_strides.span(), bias_strides.span()},
      normalized);
  const double count = static_cast<double>(loops.group_size());

  visit_supported<FloatingDType>(op, input.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = input.data<const T>();
    const T* w = weight ? weight->data<const T>() : nullptr;
    const T* b = bias ? bias->data<const T>() : nullptr;
    auto value_at = [](const T* data, int64_t offset) {
      return static_cast<double>(static_cast<compute_t<T>>(data[offset]));
    };
    using At = Offsets<kOperands>;
    loops.for_each_group([&](const At& group) {
      double sum = 0;
      loops.for_each_in_group(group,
                              [&](const At& at, int64_t) { sum += value_at(x, at[kInput]); });
      const double mean = sum / count;
      double squares = 0;
      loops.for_each_in_group(group, [&](const At& at, int64_t) {
        const double deviation = value_at(x, at[kInput]) - mean;
        squares += deviation * deviation;
      });
      const double rstd = 1.0 / std::sqrt(squares / count + eps);
      loops.for_each_in_group(group, [&](const At& at, int64_t) {
        double y = (value_at(x, at[kInput]) - mean) * rstd;
        if (w) y *= value_at(w, at[kWeight]);
        if (b) y += value_at(b, at[kBias]);
        out0.data<T>()[at[kOut]] = static_cast<T>(y);
      });
      out1.data<T>()[group[kMean]] = static_cast<T>(mean);
      out2.data<T>()[group[kRstd]] = static_cast<T>(rstd);
    });
  });
}

}  // namespace bp::cpu
