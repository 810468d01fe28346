// softmax, log_softmax, native_layer_norm and rms_norm, and the gradients of the first three:
// group kernels whose groups are normalised by their own statistics (kernels/softmax.cu,
// norm.cu); batch_norm_inference,
// elementwise over running statistics, and native_batch_norm (training: group kernels per
// channel, kernels/batch_norm.cu) with its gradient. Floating dtypes only, as in the CPU backend.
#include "CUDANativeFunctions.h"

#include "runtime/tensor_access.h"

#include <array>
#include <optional>
#include <span>
#include <string>

namespace bp::cuda {
namespace {

// softmax, or log_softmax, along `dim`; the meta step has given self out's dtype.
void softmax_into(std::string_view op, const TensorView& self, int64_t dim, const TensorView& out,
                  bool logarithm) {
  require_dtype(op, "self", self, out.dtype());
  const GroupShape<2> shape = group_shape<2>(
      op, self.sizes(), single_reduced_dim(op, self.dim(), dim), {self.strides(), out.strides()});
  const OnDevice on(out);
  launch_softmax(out.dtype(), shape, address_of(self), address_of(out), logarithm,
                 on.launch_target());
}

// The gradient of softmax or log_softmax along `dim` from its output; the meta step has given
// grad_output and output grad_input's dtype (softmax's input dtype).
void softmax_backward_into(std::string_view op, const TensorView& grad_output,
                           const TensorView& output, int64_t dim, const TensorView& grad_input,
                           bool logarithm) {
  require_dtype(op, "grad_output", grad_output, grad_input.dtype());
  require_dtype(op, "output", output, grad_input.dtype());
  const GroupShape<3> shape =
      group_shape<3>(op, grad_input.sizes(), single_reduced_dim(op, grad_input.dim(), dim),
                     {grad_output.strides(), output.strides(), grad_input.strides()});
  const OnDevice on(grad_input);
  launch_softmax_backward(grad_input.dtype(), shape, address_of(grad_output), address_of(output),
                          address_of(grad_input), logarithm, on.launch_target());
}

}  // namespace

void softmax_int_out(const TensorView& self, int64_t dim,
                     std::optional<DType> /*dtype: out has it*/, const TensorView& out) {
  softmax_into("softmax", self, dim, out, /*logarithm=*/false);
}

void log_softmax_int_out(const TensorView& self, int64_t dim,
                         std::optional<DType> /*dtype: out has it*/, const TensorView& out) {
  softmax_into("log_softmax", self, dim, out, /*logarithm=*/true);
}

void _softmax_backward_data_out(const TensorView& grad_output, const TensorView& output,
                                int64_t dim, DType /*input_dtype: grad_input has it*/,
                                const TensorView& grad_input) {
  softmax_backward_into("_softmax_backward_data", grad_output, output, dim, grad_input,
                        /*logarithm=*/false);
}

void _log_softmax_backward_data_out(const TensorView& grad_output, const TensorView& output,
                                    int64_t dim, DType /*input_dtype: grad_input has it*/,
                                    const TensorView& grad_input) {
  softmax_backward_into("_log_softmax_backward_data", grad_output, output, dim, grad_input,
                        /*logarithm=*/true);
}

// Each group is one index of the leading dimensions; its members span the trailing
// `normalized_shape`. The meta step has given weight, bias and the three outputs input's dtype;
// out1 (mean) and out2 (rstd) keep the normalised dimensions as size 1.
void native_layer_norm_out(const TensorView& input, std::span<const int64_t> normalized_shape,
                           const TensorView* weight, const TensorView* bias, double eps,
                           const TensorView& out0, const TensorView& out1, const TensorView& out2) {
  constexpr std::string_view op = "native_layer_norm";
  const int64_t ndim = input.dim();
  const DimValues<bool> normalized = trailing_dims(op, ndim, normalized_shape);
  for (const TensorView* output : {&out0, &out1, &out2})
    require_dtype(op, "outputs", *output, input.dtype());
  if (weight) require_dtype(op, "weight", *weight, input.dtype());
  if (bias) require_dtype(op, "bias", *bias, input.dtype());

  const DimValues<int64_t> mean_strides =
      reduced_output_strides(out1, normalized, /*keepdim=*/true);
  const DimValues<int64_t> rstd_strides =
      reduced_output_strides(out2, normalized, /*keepdim=*/true);
  // An absent weight or bias is not read; zero strides stand in for it.
  const DimValues<int64_t> unused(static_cast<size_t>(ndim), 0);
  const DimValues<int64_t> weight_strides =
      weight ? plugin::broadcast_strides(op, *weight, input.sizes()) : unused;
  const DimValues<int64_t> bias_strides =
      bias ? plugin::broadcast_strides(op, *bias, input.sizes()) : unused;
  const GroupShape<kNormOperands> shape =
      group_shape<kNormOperands>(op, input.sizes(), normalized,
                                 {input.strides(), out0.strides(), mean_strides.span(),
                                  rstd_strides.span(), weight_strides.span(), bias_strides.span()});
  const void* data[kNormOperands] = {address_of(input),
                                     address_of(out0),
                                     address_of(out1),
                                     address_of(out2),
                                     weight ? address_of(*weight) : nullptr,
                                     bias ? address_of(*bias) : nullptr};
  const OnDevice on(out0);
  launch_layer_norm(input.dtype(), shape, data, eps, on.launch_target());
}

// The gradients of layer norm (kernels/norm.cu): of input, one team per group; of weight and
// bias, summed over the groups in group order. mean and rstd are 1-D, one value per group (the
// meta step reshaped them), and weight has normalized_shape; all of input's dtype. bias does not
// enter the gradients.
void native_layer_norm_backward_out(const TensorView& grad_out, const TensorView& input,
                                    std::span<const int64_t> normalized_shape,
                                    const TensorView& mean, const TensorView& rstd,
                                    const TensorView* weight, const TensorView* /*bias*/,
                                    const TensorView& out0, const TensorView& out1,
                                    const TensorView& out2) {
  constexpr std::string_view op = "native_layer_norm_backward";
  plugin::require_dtypes(op,
                         {{"grad_out", &grad_out},
                          {"mean", &mean},
                          {"rstd", &rstd},
                          {"weight", weight},
                          {"grad_input", &out0},
                          {"grad_weight", &out1},
                          {"grad_bias", &out2}},
                         input.dtype());
  const int64_t ndim = input.dim();
  const DimValues<bool> normalized = trailing_dims(op, ndim, normalized_shape);
  plugin::check(mean.dim() == 1 && rstd.dim() == 1,
                std::string(op) + ": expected mean and rstd as 1-D tensors of one value per group");
  // mean and rstd read over input's shape: along the leading dims as one row-major index.
  DimValues<int64_t> mean_strides(static_cast<size_t>(ndim), 0),
      rstd_strides(static_cast<size_t>(ndim), 0);
  int64_t step = 1;
  for (int64_t d = ndim; d-- > 0;) {
    if (normalized[static_cast<size_t>(d)]) continue;
    mean_strides[static_cast<size_t>(d)] = step * mean.stride(0);
    rstd_strides[static_cast<size_t>(d)] = step * rstd.stride(0);
    step *= input.size(d);
  }
  const DimValues<int64_t> unused(static_cast<size_t>(ndim), 0);
  const DimValues<int64_t> weight_strides =
      weight ? plugin::broadcast_strides(op, *weight, input.sizes()) : unused;
  const GroupShape<kLayerNormGradOperands> shape = group_shape<kLayerNormGradOperands>(
      op, input.sizes(), normalized,
      {grad_out.strides(), input.strides(), out0.strides(), mean_strides.span(),
       rstd_strides.span(), weight_strides.span()});
  const void* data[kLayerNormGradOperands] = {
      address_of(grad_out), address_of(input), address_of(out0),
      address_of(mean),     address_of(rstd),  weight ? address_of(*weight) : nullptr};
  const OnDevice on(out0);
  Device& device = on.device();
  DeviceScratch scratch(device);
  const DenseOutput grad_weight(device, out1, scratch), grad_bias(device, out2, scratch);
  launch_layer_norm_backward(input.dtype(), shape, data, device.launch_target(), scratch,
                             grad_weight.data(), grad_bias.data());
  grad_weight.copy_back();
  grad_bias.copy_back();
}

// RMS norm over the trailing `normalized_shape`, reading the input once where a group fits in
// shared memory; the meta step has given weight and out input's dtype.
void rms_norm_out(const TensorView& input, std::span<const int64_t> normalized_shape,
                  const TensorView* weight, std::optional<double> eps, const TensorView& out) {
  constexpr std::string_view op = "rms_norm";
  require_dtype(op, "out", out, input.dtype());
  if (weight) require_dtype(op, "weight", *weight, input.dtype());
  const DimValues<bool> normalized = trailing_dims(op, input.dim(), normalized_shape);
  const DimValues<int64_t> unused(static_cast<size_t>(input.dim()), 0);
  const DimValues<int64_t> weight_strides =
      weight ? plugin::broadcast_strides(op, *weight, input.sizes()) : unused;
  const GroupShape<3> shape = group_shape<3>(
      op, input.sizes(), normalized, {input.strides(), out.strides(), weight_strides.span()});
  const OnDevice on(out);
  launch_rms_norm(input.dtype(), shape, address_of(input), address_of(out),
                  weight ? address_of(*weight) : nullptr, eps, on.launch_target());
}

namespace {

// A channel vector read over input's shape: its stride along dim 1, 0 elsewhere.
Operand per_channel(const TensorView& vector, size_t ndim, DimValues<int64_t>& strides) {
  strides = DimValues<int64_t>(ndim, 0);
  strides[1] = vector.stride(0);
  return Operand{address_of(vector), strides.span(), element_size(vector.dtype())};
}

// out = (input - mean) * weight / sqrt(var + eps) + bias per channel (dim 1), elementwise.
void normalize_per_channel(const TensorView& input, const TensorView* weight,
                           const TensorView* bias, const TensorView& mean, const TensorView& var,
                           double eps, const TensorView& out) {
  const size_t ndim = static_cast<size_t>(input.dim());
  DimValues<int64_t> mean_strides(0), var_strides(0), weight_strides(0), bias_strides(0);
  const Operand mean_operand = per_channel(mean, ndim, mean_strides);
  // An absent weight or bias is not read; the mean stands in for it.
  const std::array<Operand, 6> operands = {
      operand_of(out),
      operand_of(input),
      mean_operand,
      per_channel(var, ndim, var_strides),
      weight ? per_channel(*weight, ndim, weight_strides) : mean_operand,
      bias ? per_channel(*bias, ndim, bias_strides) : mean_operand};
  const OnDevice on(out);
  for_each_launch<6>(on.device(), out.sizes(), operands, [&](const ElementwiseLaunch<6>& launch) {
    launch_batch_norm(input.dtype(), launch, eps, weight != nullptr, bias != nullptr);
  });
}

ChannelVector channel_vector(const TensorView* vector) {
  if (!vector) return {};
  return {address_of(*vector), vector->stride(0)};
}

// Every dim but dim 1 (the channels) reduced.
DimValues<bool> all_but_channels(int64_t ndim) {
  DimValues<bool> reduced(static_cast<size_t>(ndim), true);
  reduced[1] = false;
  return reduced;
}

}  // namespace

// Per channel (dim 1); running_mean, running_var, weight and bias are 1-D of C elements in
// input's dtype (the meta step converted them).
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
  plugin::check(input.dim() >= 2,
                std::string(op) + ": expected an input of at least 2 dims (N, C, ...)");
  normalize_per_channel(input, weight, bias, running_mean, running_var, eps, out);
}

// Training: each channel's batch statistics (kernels/batch_norm.cu), saved for the gradient, and
// the input normalised by them. Evaluation: normalised by the running statistics, as
// batch_norm_inference, with empty save_mean and save_invstd. The running statistics are never
// written here (batch_norm updates them).
void native_batch_norm_out(const TensorView& input, const TensorView* weight,
                           const TensorView* bias, const TensorView* running_mean,
                           const TensorView* running_var, bool training,
                           double /*momentum: batch_norm applies it*/, double eps,
                           const TensorView& out, const TensorView& save_mean,
                           const TensorView& save_invstd) {
  constexpr std::string_view op = "native_batch_norm";
  plugin::require_dtypes(op,
                         {{"out", &out},
                          {"save_mean", &save_mean},
                          {"save_invstd", &save_invstd},
                          {"running_mean", running_mean},
                          {"running_var", running_var},
                          {"weight", weight},
                          {"bias", bias}},
                         input.dtype());
  plugin::check(input.dim() >= 2,
                std::string(op) + ": expected an input of at least 2 dims (N, C, ...)");
  if (!training) {
    plugin::check(running_mean && running_var,
                  std::string(op) + ": evaluation needs running_mean and running_var");
    normalize_per_channel(input, weight, bias, *running_mean, *running_var, eps, out);
    return;
  }
  const GroupShape<2> shape = group_shape<2>(op, input.sizes(), all_but_channels(input.dim()),
                                             {input.strides(), out.strides()});
  const OnDevice on(out);
  launch_batch_norm_training(input.dtype(), shape, address_of(input), address_of(out),
                             channel_vector(weight), channel_vector(bias),
                             channel_vector(&save_mean), channel_vector(&save_invstd), eps,
                             on.launch_target());
}

// One team per channel (kernels/batch_norm.cu): with train, the statistics are save_mean and
// save_invstd and depend on the input; otherwise running_mean and running_var, constants.
void native_batch_norm_backward_out(const TensorView& grad_out, const TensorView& input,
                                    const TensorView* weight, const TensorView* running_mean,
                                    const TensorView* running_var, const TensorView* save_mean,
                                    const TensorView* save_invstd, bool train, double eps,
                                    const TensorView& out0, const TensorView& out1,
                                    const TensorView& out2) {
  constexpr std::string_view op = "native_batch_norm_backward";
  plugin::require_dtypes(op,
                         {{"input", &input},
                          {"weight", weight},
                          {"running_mean", running_mean},
                          {"running_var", running_var},
                          {"save_mean", save_mean},
                          {"save_invstd", save_invstd},
                          {"grad_input", &out0},
                          {"grad_weight", &out1},
                          {"grad_bias", &out2}},
                         grad_out.dtype());
  plugin::check(input.dim() >= 2,
                std::string(op) + ": expected an input of at least 2 dims (N, C, ...)");
  const TensorView* mean = train ? save_mean : running_mean;
  const TensorView* statistic = train ? save_invstd : running_var;
  plugin::check(mean && statistic,
                std::string(op) + (train ? ": train=true needs save_mean and save_invstd"
                                         : ": train=false needs running_mean and running_var"));
  const GroupShape<3> shape = group_shape<3>(op, input.sizes(), all_but_channels(input.dim()),
                                             {grad_out.strides(), input.strides(), out0.strides()});
  const OnDevice on(out0);
  launch_batch_norm_backward(grad_out.dtype(), shape, address_of(grad_out), address_of(input),
                             address_of(out0), channel_vector(weight), channel_vector(mean),
                             channel_vector(statistic), /*invstd_from_variance=*/!train, train, eps,
                             channel_vector(&out1), channel_vector(&out2), on.launch_target());
}

}  // namespace bp::cuda
