// The normalization ops: softmax, log_softmax, native_layer_norm and rms_norm, which normalise
// groups of elements along one or several dimensions (row_normalization.h), their gradients
// (row_gradients.h), batch_norm_inference, which normalises each channel with running
// statistics (batch_norm.h), and native_batch_norm and its backward, with batch statistics
// (batch_norm_training.h).
#include "CPUNativeFunctions.h"

#include "kernels/batch_norm.h"
#include "kernels/batch_norm_training.h"
#include "kernels/reduction_loops.h"
#include "kernels/row_gradients.h"
#include "kernels/row_normalization.h"
#include "kernels/strided_loop.h"

#include <backplane/sdk/reduction_dims.hpp>

#include <algorithm>
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

namespace {

// softmax's or log_softmax's gradient along `dim`, in the compute type of grad_input's dtype
// (one that Kernel takes), which the meta step has given grad_output and output too.
template <typename Kernel>
void softmax_backward_into(std::string_view op, const TensorView& grad_output,
                           const TensorView& output, int64_t dim, const TensorView& grad_input,
                           bool log) {
  require_dtype(op, "grad_output", grad_output, grad_input.dtype());
  require_dtype(op, "output", output, grad_input.dtype());
  enum Operand { kGradInput, kGradOutput, kOutput, kOperands };
  const ReductionLoops<kOperands> loops(
      grad_output.sizes(), {grad_input.strides(), grad_output.strides(), output.strides()},
      single_reduced_dim(op, grad_output.dim(), dim));
  plugin::visit_dtype<Kernel>(grad_input.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    const int64_t n = loops.group_size();
    T* const dx = grad_input.data<T>();
    const T* const g = grad_output.data<const T>();
    const T* const y = output.data<const T>();
    if constexpr (!kConvertsToCompute<T>) {
      if (loops.groups_contiguous_in(kGradInput) && loops.groups_contiguous_in(kGradOutput) &&
          loops.groups_contiguous_in(kOutput)) {
        loops.for_each_group([&](const Offsets<kOperands>& group) {
          softmax_backward_span(g + group[kGradOutput], y + group[kOutput], dx + group[kGradInput],
                                n, log);
        });
        return;
      }
    }
    struct Rows {
      std::vector<C> g, y, dx;
    };
    loops.template for_each_group_with<Rows>([&](const Offsets<kOperands>& group, Rows& rows) {
      for (std::vector<C>* row : {&rows.g, &rows.y, &rows.dx}) row->resize(static_cast<size_t>(n));
      gather_group(loops, group, kGradOutput, g, rows.g.data());
      gather_group(loops, group, kOutput, y, rows.y.data());
      softmax_backward_span(static_cast<const C*>(rows.g.data()),
                            static_cast<const C*>(rows.y.data()), rows.dx.data(), n, log);
      scatter_group(loops, group, kGradInput, static_cast<const C*>(rows.dx.data()), dx);
    });
  });
}

}  // namespace

void _softmax_backward_data_out(const TensorView& grad_output, const TensorView& output,
                                int64_t dim, bp::DType /*input_dtype: grad_input has it*/,
                                const TensorView& grad_input) {
  softmax_backward_into<kernel_dtypes::_softmax_backward_data_out>(
      "_softmax_backward_data", grad_output, output, dim, grad_input, /*log=*/false);
}

void _log_softmax_backward_data_out(const TensorView& grad_output, const TensorView& output,
                                    int64_t dim, bp::DType /*input_dtype: grad_input has it*/,
                                    const TensorView& grad_input) {
  softmax_backward_into<kernel_dtypes::_log_softmax_backward_data_out>(
      "_log_softmax_backward_data", grad_output, output, dim, grad_input, /*log=*/true);
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

namespace {

// How many blocks of groups layer norm's gradient splits the groups into: each block sums its
// groups' shares of the parameters' gradients on its own, and the blocks' sums are added in
// block order, so that the result does not depend on the thread count. A block holds at least
// kElementsPerChunk elements, where there are that many.
int64_t parameter_gradient_blocks(int64_t groups, int64_t group_size) {
  constexpr int64_t kMaxBlocks = 64;
  const int64_t by_size = groups * group_size / kElementsPerChunk;
  return std::min(groups, std::clamp<int64_t>(by_size, 1, kMaxBlocks));
}

}  // namespace

// The meta step made every input contiguous, mean and rstd 1-D with one value per group: the
// tensors are (groups, n) matrices.
void native_layer_norm_backward_out(const TensorView& grad_out, const TensorView& input,
                                    std::span<const int64_t> normalized_shape,
                                    const TensorView& mean, const TensorView& rstd,
                                    const TensorView* weight,
                                    const TensorView* /*bias: the gradients do not read it*/,
                                    const TensorView& out0, const TensorView& out1,
                                    const TensorView& out2) {
  constexpr std::string_view op = "native_layer_norm_backward";
  plugin::require_dtypes(op,
                         {{"grad_out", &grad_out},
                          {"mean", &mean},
                          {"rstd", &rstd},
                          {"weight", weight},
                          {"outputs", &out0},
                          {"outputs", &out1},
                          {"outputs", &out2}},
                         input.dtype());
  int64_t n = 1;
  for (const int64_t size : normalized_shape) n *= size;
  int64_t groups = 1;
  for (int64_t d = 0; d < input.dim() - static_cast<int64_t>(normalized_shape.size()); ++d) {
    groups *= input.size(d);
  }
  plugin::visit_dtype<kernel_dtypes::native_layer_norm_backward_out>(input.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    const auto row_size = static_cast<size_t>(n);
    std::vector<C> weights;
    if (weight != nullptr) {
      weights.resize(row_size);
      convert_elements(weight->data<const T>(), weights.data(), n);
    }
    const int64_t blocks = parameter_gradient_blocks(groups, n);
    const int64_t per_block = blocks == 0 ? 0 : (groups + blocks - 1) / blocks;
    std::vector<C> weight_sums(static_cast<size_t>(blocks) * row_size);
    std::vector<C> bias_sums(weight_sums.size());
    const T* const g = grad_out.data<const T>();
    const T* const x = input.data<const T>();
    const T* const means = mean.data<const T>();
    const T* const rstds = rstd.data<const T>();
    T* const dx = out0.data<T>();
    parallel_for(blocks, 1, [&](int64_t begin, int64_t end) {
      std::vector<C> rows(kConvertsToCompute<T> ? 3 * row_size : 0);
      for (int64_t block = begin; block < end; ++block) {
        const size_t sums_at = static_cast<size_t>(block) * row_size;
        for (int64_t group = block * per_block; group < std::min(groups, (block + 1) * per_block);
             ++group) {
          const int64_t at = group * n;
          const auto statistic = [&](const T* values) { return static_cast<C>(values[group]); };
          if constexpr (kConvertsToCompute<T>) {
            C* const g_row = rows.data();
            C* const x_row = g_row + n;
            C* const dx_row = x_row + n;
            convert_elements(g + at, g_row, n);
            convert_elements(x + at, x_row, n);
            layer_norm_backward_span<C>(g_row, x_row, weight ? weights.data() : nullptr,
                                        statistic(means), statistic(rstds), dx_row, n,
                                        weight_sums.data() + sums_at, bias_sums.data() + sums_at);
            convert_elements(static_cast<const C*>(dx_row), dx + at, n);
          } else {
            layer_norm_backward_span<C>(g + at, x + at, weight ? weights.data() : nullptr,
                                        statistic(means), statistic(rstds), dx + at, n,
                                        weight_sums.data() + sums_at, bias_sums.data() + sums_at);
          }
        }
      }
    });
    // Each block's sums added in block order.
    for (const auto& [sums, out] : {std::pair{&weight_sums, &out1}, std::pair{&bias_sums, &out2}}) {
      std::vector<C> total(row_size);
      for (int64_t block = 0; block < blocks; ++block) {
        const C* const partial = sums->data() + static_cast<size_t>(block) * row_size;
        for (int64_t i = 0; i < n; ++i) total[static_cast<size_t>(i)] += partial[i];
      }
      convert_elements(static_cast<const C*>(total.data()), out->template data<T>(), n);
    }
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

// Each channel (dim 1) normalised with its running statistics: on the plugin's loops for
// float32 and float64, whose one pass over per-channel factors runs at a multiple of the speed of
// oneDNN's batch normalization on plain NCHW; through oneDNN for the 16-bit dtypes where this
// CPU's oneDNN has them.
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
    const bool half_width = out.dtype() == kFloat16 || out.dtype() == kBFloat16;
    if (half_width && onednn_batch_norm_supports(out.dtype())) {
      return onednn_batch_norm(input, weight, bias, running_mean, running_var, eps, out);
    }
    batch_norm_loops<typename decltype(tag)::type>(input, weight, bias, running_mean, running_var,
                                                   eps, out);
  });
}

// Without training, each channel is normalised with its running statistics exactly as
// batch_norm_inference does, and the saved statistics are empty.
void native_batch_norm_out(const TensorView& input, const TensorView* weight,
                           const TensorView* bias, const TensorView* running_mean,
                           const TensorView* running_var, bool training,
                           double /*momentum: the running statistics are batch_norm's*/, double eps,
                           const TensorView& out, const TensorView& save_mean,
                           const TensorView& save_invstd) {
  if (!training) {
    return batch_norm_inference_out(input, weight, bias, *running_mean, *running_var, eps, out);
  }
  plugin::require_dtypes("native_batch_norm",
                         {{"out", &out},
                          {"save_mean", &save_mean},
                          {"save_invstd", &save_invstd},
                          {"weight", weight},
                          {"bias", bias}},
                         input.dtype());
  if (input.size(1) == 0) return;
  plugin::visit_dtype<kernel_dtypes::native_batch_norm_out>(out.dtype(), [&](auto tag) {
    if (input.dtype() == DType::Float32 && input.numel() > 0 &&
        onednn_batch_norm_training_supported()) {
      return onednn_batch_norm_training(input, weight, bias, eps, out, save_mean, save_invstd);
    }
    batch_norm_training_loops<typename decltype(tag)::type>(input, weight, bias, eps, out,
                                                            save_mean, save_invstd);
  });
}

void native_batch_norm_backward_out(const TensorView& grad_out, const TensorView& input,
                                    const TensorView* weight, const TensorView* running_mean,
                                    const TensorView* running_var, const TensorView* save_mean,
                                    const TensorView* save_invstd, bool train, double eps,
                                    const TensorView& grad_input, const TensorView& grad_weight,
                                    const TensorView& grad_bias) {
  // The meta step made sure the statistics of the mode are present.
  const TensorView& mean = train ? *save_mean : *running_mean;
  const TensorView& second = train ? *save_invstd : *running_var;
  plugin::require_dtypes("native_batch_norm_backward",
                         {{"input", &input},
                          {"weight", weight},
                          {"mean", &mean},
                          {"invstd or var", &second},
                          {"grad_input", &grad_input},
                          {"grad_weight", &grad_weight},
                          {"grad_bias", &grad_bias}},
                         grad_out.dtype());
  if (input.size(1) == 0) return;
  plugin::visit_dtype<kernel_dtypes::native_batch_norm_backward_out>(
      grad_out.dtype(), [&](auto tag) {
        if (input.dtype() == DType::Float32 && input.numel() > 0 &&
            onednn_batch_norm_training_supported()) {
          return onednn_batch_norm_backward(grad_out, input, weight, mean, second, train, eps,
                                            grad_input, grad_weight, grad_bias);
        }
        batch_norm_backward_loops<typename decltype(tag)::type>(
            grad_out, input, weight, mean, second, train, eps, grad_input, grad_weight, grad_bias);
      });
}

}  // namespace bp::cpu
