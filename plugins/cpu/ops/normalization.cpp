// The normalization ops: softmax, log_softmax, native_layer_norm and rms_norm, which normalise
// groups of elements along one or several dimensions (row_normalization.h), and
// batch_norm_inference, which normalises each channel with running statistics (batch_norm.h).
#include "CPUNativeFunctions.h"

#include "kernels/batch_norm.h"
#include "kernels/reduction_loops.h"
#include "kernels/row_normalization.h"
#include "kernels/strided_loop.h"

#include <backplane/sdk/reduction_dims.hpp>

#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace bp::cpu {
namespace {

// softmax or log_softmax along `dim`, computed in the compute type of out's dtype (one that
// Kernel takes), which the meta step has given self too.
template <typename Kernel>
void softmax_into(std::string_view op, const TensorView& self, int64_t dim, const TensorView& out,
                  bool log) {
  require_dtype(op, "self", self, out.dtype());
  const ReductionLoops<2> loops(self.sizes(), {self.strides(), out.strides()},
                                single_reduced_dim(op, self.dim(), dim));
  plugin::visit_dtype<Kernel>(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    if (loops.groups_side_by_side()) {
      loops.for_each_group_run<NoScratch>([&](const Offsets<2>& first, const Offsets<2>& step,
                                              int64_t count, NoScratch&) {
        softmax_side_by_side(loops, first, step, count, self.data<const T>(), out.data<T>(), log);
      });
      return;
    }
    for_each_group_span(loops, self.data<const T>(), out.data<T>(),
                        [&](const Offsets<2>&, const C* x, C* y, int64_t n,
                            const NextRows<C>& next) { softmax_span(x, y, n, log, next); });
  });
}

// A parameter that is the same for every group (the weight or bias of layer norm and rms
// norm), as one contiguous array of doubles, converted once per call rather than once per
// group; empty when the parameter is absent.
template <typename T, size_t N>
std::vector<double> per_group_parameter(const ReductionLoops<N>& loops, size_t k,
                                        const TensorView* parameter) {
  std::vector<double> values;
  if (parameter == nullptr) return values;
  values.resize(static_cast<size_t>(loops.group_size()));
  gather_group(loops, Offsets<N>{}, k, parameter->data<const T>(), values.data());
  return values;
}

// The parameter's first element, or null for an absent one.
inline const double* data_or_null(const std::vector<double>& values) {
  return values.empty() ? nullptr : values.data();
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

void softmax_int_out(const TensorView& self, int64_t dim,
                     std::optional<bp::DType> /*dtype: out has it*/, const TensorView& out) {
  softmax_into<kernel_dtypes::softmax_int_out>("softmax", self, dim, out, /*log=*/false);
}

void log_softmax_int_out(const TensorView& self, int64_t dim,
                         std::optional<bp::DType> /*dtype: out has it*/, const TensorView& out) {
  softmax_into<kernel_dtypes::log_softmax_int_out>("log_softmax", self, dim, out, /*log=*/true);
}

// Layer norm and RMS norm: each group is one index of the leading dimensions; its elements
// span the trailing `normalized_shape`, which the meta step has checked against the input's
// shape.
void native_layer_norm_out(const TensorView& input, std::span<const int64_t> normalized_shape,
                           const TensorView* weight, const TensorView* bias, double eps,
                           const TensorView& out0, const TensorView& out1, const TensorView& out2) {
  constexpr std::string_view op = "native_layer_norm";
  for (const TensorView* output : {&out0, &out1, &out2})
    require_dtype(op, "outputs", *output, input.dtype());
  const DimValues<bool> normalized = trailing_dims(op, input.dim(), normalized_shape);
  const DimValues<int64_t> mean_strides =
      reduced_output_strides(out1, normalized, /*keepdim=*/true);
  const DimValues<int64_t> rstd_strides =
      reduced_output_strides(out2, normalized, /*keepdim=*/true);
  const DimValues<int64_t> weight_strides = parameter_strides(op, "weight", weight, input);
  const DimValues<int64_t> bias_strides = parameter_strides(op, "bias", bias, input);
  enum LayerNormOperand { kInput, kOut, kMean, kRstd, kWeight, kBias, kOperands };
  const ReductionLoops<kOperands> loops(input.sizes(),
                                        {input.strides(), out0.strides(), mean_strides.span(),
                                         rstd_strides.span(), weight_strides.span(),
                                         bias_strides.span()},
                                        normalized);

  plugin::visit_dtype<kernel_dtypes::native_layer_norm_out>(out0.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    const std::vector<double> weights = per_group_parameter<T>(loops, kWeight, weight);
    const std::vector<double> biases = per_group_parameter<T>(loops, kBias, bias);
    const double* w = data_or_null(weights);
    const double* b = data_or_null(biases);
    T* mean = out1.data<T>();
    T* rstd = out2.data<T>();
    if (loops.groups_side_by_side()) {
      loops.template for_each_group_run<NoScratch>([&](const Offsets<kOperands>& first,
                                                       const Offsets<kOperands>& step,
                                                       int64_t count, NoScratch&) {
        normalize_side_by_side(
            loops, first, step, count, input.data<const T>(), out0.data<T>(), /*rms=*/false, eps, w,
            b, [&](const Offsets<kOperands>& tile_first, int64_t j, double m, double r) {
              mean[tile_first[kMean] + j * step[kMean]] = static_cast<T>(m);
              rstd[tile_first[kRstd] + j * step[kRstd]] = static_cast<T>(r);
            });
      });
      return;
    }
    for_each_group_span(
        loops, input.data<const T>(), out0.data<T>(),
        [&](const Offsets<kOperands>& group, const C* x, C* y, int64_t n, const NextRows<C>& next) {
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
  const DimValues<bool> normalized = trailing_dims(op, input.dim(), normalized_shape);
  const DimValues<int64_t> weight_strides = parameter_strides(op, "weight", weight, input);
  enum RmsNormOperand { kInput, kOut, kWeight, kOperands };
  const ReductionLoops<kOperands> loops(
      input.sizes(), {input.strides(), out.strides(), weight_strides.span()}, normalized);

  plugin::visit_dtype<kernel_dtypes::rms_norm_out>(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    const double epsilon = eps.value_or(std::numeric_limits<C>::epsilon());
    const std::vector<double> weights = per_group_parameter<T>(loops, kWeight, weight);
    const double* w = data_or_null(weights);
    if (loops.groups_side_by_side()) {
      loops.template for_each_group_run<NoScratch>([&](const Offsets<kOperands>& first,
                                                       const Offsets<kOperands>& step,
                                                       int64_t count, NoScratch&) {
        normalize_side_by_side(loops, first, step, count, input.data<const T>(), out.data<T>(),
                               /*rms=*/true, epsilon, w, nullptr,
                               [](const Offsets<kOperands>&, int64_t, double, double) {});
      });
      return;
    }
    for_each_group_span(
        loops, input.data<const T>(), out.data<T>(),
        [&](const Offsets<kOperands>&, const C* x, C* y, int64_t n, const NextRows<C>& next) {
          const Moments moments{0, reciprocal_root_mean_square(x, n, epsilon)};
          normalize_span(x, y, n, moments, w, nullptr, next);
        });
  });
}

// Each channel (dim 1) normalised with its running statistics: through oneDNN where this CPU's
// oneDNN has out's dtype, else on the plugin's loops.
void batch_norm_inference_out(const TensorView& input, const TensorView* weight,
                              const TensorView* bias, const TensorView& running_mean,
                              const TensorView& running_var, double eps, const TensorView& out) {
  constexpr std::string_view op = "batch_norm";
  // The meta step converted every per-channel tensor to input's dtype.
  plugin::require_dtypes(op,
                         {{"out", &out},
                          {"running_mean", &running_mean},
                          {"running_var", &running_var},
                          {"weight", weight},
                          {"bias", bias}},
                         input.dtype());
  if (out.numel() == 0) return;
  plugin::visit_dtype<kernel_dtypes::batch_norm_inference_out>(out.dtype(), [&](auto tag) {
    if (onednn_batch_norm_supports(out.dtype())) {
      return onednn_batch_norm(input, weight, bias, running_mean, running_var, eps, out);
    }
    batch_norm_loops<typename decltype(tag)::type>(input, weight, bias, running_mean, running_var,
                                                   eps, out);
  });
}

void native_batch_norm_out(const TensorView&, const TensorView*, const TensorView*,
                           const TensorView*, const TensorView*, bool, double, double,
                           const TensorView&, const TensorView&, const TensorView&) {
  throw plugin::Error(BP_STATUS_UNIMPLEMENTED, "native_batch_norm: the CPU kernel is not implemented yet");
}

void native_batch_norm_backward_out(const TensorView&, const TensorView&, const TensorView*,
                                    const TensorView*, const TensorView*, const TensorView*,
                                    const TensorView*, bool, double, const TensorView&,
                                    const TensorView&, const TensorView&) {
  throw plugin::Error(BP_STATUS_UNIMPLEMENTED, "native_batch_norm_backward: the CPU kernel is not implemented yet");
}

}  // namespace bp::cpu
