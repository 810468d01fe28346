// softmax, log_softmax, native_layer_norm and rms_norm (kernels/normalization.cl): group
// kernels whose groups are normalised by their own statistics; batch_norm_inference, with
// running statistics, an elementwise kernel (kernels/elementwise.cl); native_batch_norm, a group
// kernel per channel in training mode. Their gradients are group kernels too: softmax's and
// layer norm's per group, layer norm's weight and bias per normalised position, batch norm's per
// channel. Floating dtypes only, as in the CPU backend.
#include "OpenCLNativeFunctions.h"

#include "kernels/scalar_args.h"
#include "runtime/kernel_launch.h"

#include <cfloat>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace bp::opencl {
namespace {

// softmax, or log_softmax, along `dim`; the meta step has given self out's dtype.
void softmax_into(std::string_view op, const TensorView& self, int64_t dim, const TensorView& out,
                  bool logarithm) {
  Device& device = device_of(out);
  require_dtype(op, "self", self, out.dtype());
  device.require_double_precision_for(op, out.dtype());
  const GroupShape shape = split_groups(self.sizes(), single_reduced_dim(op, self.dim(), dim),
                                        {self.strides(), out.strides()}, op);
  if (shape.groups() == 0 || shape.group_size() == 0) return;
  KernelArgs args;
  args.add_group_params(shape)
      .add_grouped(buffer_of(self), shape, 0)
      .add_grouped(buffer_of(out), shape, 1)
      .add(cl_int{logarithm});
  const cl_program program = device.program(KernelSource::Normalization, out.dtype());
  if (const std::optional<SideBySideLaunch> tiled =
          side_by_side_launch(device, shape, "softmax_side_by_side", {0, 1})) {
    launch(device, program, tiled->kernel.c_str(), args, tiled->work);
    return;
  }
  launch(device, program, "softmax", args, group_work(device, shape));
}

}  // namespace

void softmax_int_out(const TensorView& self, int64_t dim,
                     std::optional<DType> /*dtype: out has it*/, const TensorView& out) {
  plugin::require_dtype_of<plugin::kernel_dtypes::softmax_int_out>(out.dtype());
  softmax_into("softmax", self, dim, out, /*logarithm=*/false);
}

void log_softmax_int_out(const TensorView& self, int64_t dim,
                         std::optional<DType> /*dtype: out has it*/, const TensorView& out) {
  plugin::require_dtype_of<plugin::kernel_dtypes::log_softmax_int_out>(out.dtype());
  softmax_into("log_softmax", self, dim, out, /*logarithm=*/true);
}

namespace {

// softmax's gradient, or log_softmax's, along `dim`; the meta step has given grad_output and
// output grad_input's dtype.
void softmax_backward_into(std::string_view op, const TensorView& grad_output,
                           const TensorView& output, int64_t dim, const TensorView& grad_input,
                           bool logarithm) {
  Device& device = device_of(grad_input);
  plugin::require_dtypes(op, {{"grad_output", &grad_output}, {"output", &output}},
                         grad_input.dtype());
  device.require_double_precision_for(op, grad_input.dtype());
  const GroupShape shape =
      split_groups(grad_output.sizes(), single_reduced_dim(op, grad_output.dim(), dim),
                   {grad_output.strides(), output.strides(), grad_input.strides()}, op);
  if (shape.groups() == 0 || shape.group_size() == 0) return;
  KernelArgs args;
  args.add_group_params(shape)
      .add_grouped(buffer_of(grad_output), shape, 0)
      .add_grouped(buffer_of(output), shape, 1)
      .add_grouped(buffer_of(grad_input), shape, 2)
      .add(cl_int{logarithm});
  launch(device, device.program(KernelSource::Normalization, grad_input.dtype()),
         "softmax_backward", args, group_work(device, shape));
}

}  // namespace

void _softmax_backward_data_out(const TensorView& grad_output, const TensorView& output,
                                int64_t dim, DType /*input_dtype: grad_input has it*/,
                                const TensorView& grad_input) {
  plugin::require_dtype_of<plugin::kernel_dtypes::_softmax_backward_data_out>(grad_input.dtype());
  softmax_backward_into("_softmax_backward_data", grad_output, output, dim, grad_input,
                        /*logarithm=*/false);
}

void _log_softmax_backward_data_out(const TensorView& grad_output, const TensorView& output,
                                    int64_t dim, DType /*input_dtype: grad_input has it*/,
                                    const TensorView& grad_input) {
  plugin::require_dtype_of<plugin::kernel_dtypes::_log_softmax_backward_data_out>(
      grad_input.dtype());
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
  plugin::require_dtype_of<plugin::kernel_dtypes::native_layer_norm_out>(out0.dtype());
  Device& device = device_of(out0);
  const int64_t ndim = input.dim();
  for (const TensorView* output : {&out0, &out1, &out2}) {
    require_dtype(op, "outputs", *output, input.dtype());
  }
  if (weight) require_dtype(op, "weight", *weight, input.dtype());
  if (bias) require_dtype(op, "bias", *bias, input.dtype());
  device.require_double_precision_for(op, input.dtype());

  const plugin::DimValues<bool> normalized = trailing_dims(op, input.dim(), normalized_shape);
  const plugin::DimValues<int64_t> mean_strides =
      reduced_output_strides(out1, normalized, /*keepdim=*/true);
  const plugin::DimValues<int64_t> rstd_strides =
      reduced_output_strides(out2, normalized, /*keepdim=*/true);
  // An absent weight or bias is not read; zero strides stand in for it.
  const plugin::DimValues<int64_t> unused(static_cast<size_t>(ndim), 0);
  const auto weight_strides =
      weight ? plugin::broadcast_strides(op, *weight, input.sizes()) : unused;
  const auto bias_strides = bias ? plugin::broadcast_strides(op, *bias, input.sizes()) : unused;
  enum LayerNormOperand : size_t { kInput, kOut, kMean, kRstd, kWeight, kBias };
  const GroupShape shape =
      split_groups(input.sizes(), normalized,
                   {input.strides(), out0.strides(), mean_strides.span(), rstd_strides.span(),
                    weight_strides.span(), bias_strides.span()},
                   op);
  if (shape.groups() == 0) return;

  const Buffer in = buffer_of(input);
  KernelArgs args;
  args.add_group_params(shape)
      .add_grouped(in, shape, kInput)
      .add_grouped(buffer_of(out0), shape, kOut)
      .add_per_group(buffer_of(out1), shape, kMean)
      .add_per_group(buffer_of(out2), shape, kRstd)
      .add_per_member(weight ? buffer_of(*weight) : in, shape, kWeight)
      .add_per_member(bias ? buffer_of(*bias) : in, shape, kBias)
      .add(cl_int{weight != nullptr})
      .add(cl_int{bias != nullptr})
      .add(accumulator_scalar(device, input.dtype(), eps));
  launch(device, device.program(KernelSource::Normalization, input.dtype()), "layer_norm", args,
         group_work(device, shape));
}

// Two group kernels: the gradient of input with the rows of the leading dimensions as groups, and
// those of weight and bias with the positions of `normalized_shape` as groups, each summing over
// the rows. The meta step has given every tensor input's dtype, and made mean and rstd 1-D with
// one value per row.
void native_layer_norm_backward_out(const TensorView& grad_out, const TensorView& input,
                                    std::span<const int64_t> normalized_shape,
                                    const TensorView& mean, const TensorView& rstd,
                                    const TensorView* weight,
                                    const TensorView* /*bias: the gradients do not read it*/,
                                    const TensorView& out0, const TensorView& out1,
                                    const TensorView& out2) {
  constexpr std::string_view op = "native_layer_norm_backward";
  plugin::require_dtype_of<plugin::kernel_dtypes::native_layer_norm_backward_out>(input.dtype());
  plugin::require_dtypes(op,
                         {{"grad_out", &grad_out},
                          {"mean", &mean},
                          {"rstd", &rstd},
                          {"weight", weight},
                          {"outputs", &out0},
                          {"outputs", &out1},
                          {"outputs", &out2}},
                         input.dtype());
  Device& device = device_of(out0);
  device.require_double_precision_for(op, input.dtype());
  plugin::check(mean.dim() == 1 && rstd.dim() == 1,
                std::string(op) + ": the OpenCL kernel takes mean and rstd as 1-D tensors");
  const auto ndim = static_cast<size_t>(input.dim());
  const plugin::DimValues<bool> normalized = trailing_dims(op, input.dim(), normalized_shape);
  // mean and rstd hold the rows in row-major order; weight and the parameters' gradients have
  // normalized_shape.
  plugin::DimValues<int64_t> mean_strides(ndim, 0), rstd_strides(ndim, 0);
  int64_t rows = 1;
  for (size_t d = ndim; d-- > 0;) {
    if (normalized[d]) continue;
    mean_strides[d] = rows * mean.stride(0);
    rstd_strides[d] = rows * rstd.stride(0);
    rows *= input.size(static_cast<int64_t>(d));
  }
  const plugin::DimValues<int64_t> unused(ndim, 0);
  const auto parameter_strides = [&](const TensorView& parameter) {
    return plugin::broadcast_strides(op, parameter, input.sizes());
  };
  const auto weight_strides = weight ? parameter_strides(*weight) : unused;
  const auto grad_weight_strides = parameter_strides(out1);
  const auto grad_bias_strides = parameter_strides(out2);
  enum Operand : size_t {
    kGrad,
    kInput,
    kGradInput,
    kMean,
    kRstd,
    kWeight,
    kGradWeight,
    kGradBias
  };
  const OperandStrides strides{
      grad_out.strides(),         input.strides(),         out0.strides(),
      mean_strides.span(),        rstd_strides.span(),     weight_strides.span(),
      grad_weight_strides.span(), grad_bias_strides.span()};
  const cl_program program = device.program(KernelSource::Normalization, input.dtype());
  const Buffer grad = buffer_of(grad_out), in = buffer_of(input);

  const GroupShape rows_shape = split_groups(input.sizes(), normalized, strides, op);
  if (rows_shape.groups() > 0 && rows_shape.group_size() > 0) {
    KernelArgs args;
    args.add_group_params(rows_shape)
        .add_grouped(grad, rows_shape, kGrad)
        .add_grouped(in, rows_shape, kInput)
        .add_grouped(buffer_of(out0), rows_shape, kGradInput)
        .add_per_group(buffer_of(mean), rows_shape, kMean)
        .add_per_group(buffer_of(rstd), rows_shape, kRstd)
        .add_per_member(weight ? buffer_of(*weight) : in, rows_shape, kWeight)
        .add(cl_int{weight != nullptr});
    launch(device, program, "layer_norm_backward", args, group_work(device, rows_shape));
  }

  plugin::DimValues<bool> leading(ndim, false);
  for (size_t d = 0; d < ndim; ++d) leading[d] = !normalized[d];
  const GroupShape positions_shape = split_groups(input.sizes(), leading, strides, op);
  if (positions_shape.groups() == 0) return;
  KernelArgs args;
  args.add_group_params(positions_shape)
      .add_grouped(grad, positions_shape, kGrad)
      .add_grouped(in, positions_shape, kInput)
      .add_per_member(buffer_of(mean), positions_shape, kMean)
      .add_per_member(buffer_of(rstd), positions_shape, kRstd)
      .add_per_group(buffer_of(out1), positions_shape, kGradWeight)
      .add_per_group(buffer_of(out2), positions_shape, kGradBias);
  launch(device, program, "layer_norm_backward_parameters", args,
         group_work(device, positions_shape));
}

// Each group is one index of the leading dimensions; its members span the trailing
// `normalized_shape`. Without eps, the epsilon of the dtype's compute type, as the CPU backend.
void rms_norm_out(const TensorView& input, std::span<const int64_t> normalized_shape,
                  const TensorView* weight, std::optional<double> eps, const TensorView& out) {
  constexpr std::string_view op = "rms_norm";
  plugin::require_dtype_of<plugin::kernel_dtypes::rms_norm_out>(out.dtype());
  Device& device = device_of(out);
  require_dtype(op, "out", out, input.dtype());
  if (weight) require_dtype(op, "weight", *weight, input.dtype());
  device.require_double_precision_for(op, input.dtype());

  const plugin::DimValues<bool> normalized = trailing_dims(op, input.dim(), normalized_shape);
  const plugin::DimValues<int64_t> unused(static_cast<size_t>(input.dim()), 0);
  const auto weight_strides =
      weight ? plugin::broadcast_strides(op, *weight, input.sizes()) : unused;
  enum RmsNormOperand : size_t { kInput, kOut, kWeight };
  const GroupShape shape = split_groups(
      input.sizes(), normalized, {input.strides(), out.strides(), weight_strides.span()}, op);
  if (shape.groups() == 0 || shape.group_size() == 0) return;

  const Buffer in = buffer_of(input);
  const double epsilon = eps.value_or(input.dtype() == DType::Float64 ? DBL_EPSILON : FLT_EPSILON);
  KernelArgs args;
  args.add_group_params(shape)
      .add_grouped(in, shape, kInput)
      .add_grouped(buffer_of(out), shape, kOut)
      .add_per_member(weight ? buffer_of(*weight) : in, shape, kWeight)
      .add(cl_int{weight != nullptr})
      .add(accumulator_scalar(device, input.dtype(), epsilon));
  launch(device, device.program(KernelSource::Normalization, input.dtype()), "rms_norm", args,
         group_work(device, shape));
}

namespace {

// A per-channel tensor's strides over input's shape (N, C, ...): its own along the channels, 0
// in every other dim. An absent one is not read: all 0.
plugin::DimValues<int64_t> channel_strides(const TensorView& input, const TensorView* parameter) {
  plugin::DimValues<int64_t> strides(static_cast<size_t>(input.dim()), 0);
  if (parameter) strides[1] = parameter->stride(0);
  return strides;
}

// out = (input - running_mean) / sqrt(running_var + eps) * weight + bias along dim 1, the
// channels, by the elementwise batch_norm kernel; every tensor has input's dtype.
void normalize_with_running_statistics(std::string_view op, const TensorView& input,
                                       const TensorView* weight, const TensorView* bias,
                                       const TensorView& running_mean,
                                       const TensorView& running_var, double eps,
                                       const TensorView& out) {
  Device& device = device_of(out);
  device.require_double_precision_for(op, input.dtype());
  plugin::check(input.dim() >= 2,
                std::string(op) + ": the input needs a channel dimension (dim 1)");
  if (out.numel() == 0) return;
  const auto mean_strides = channel_strides(input, &running_mean),
             var_strides = channel_strides(input, &running_var);
  const auto weight_strides = channel_strides(input, weight),
             bias_strides = channel_strides(input, bias);
  // An absent weight or bias is not read; input stands in for it.
  const std::vector<Operand> operands{operand_of(out),
                                      operand_of(input),
                                      {buffer_of(running_mean), mean_strides.span()},
                                      {buffer_of(running_var), var_strides.span()},
                                      {buffer_of(weight ? *weight : input), weight_strides.span()},
                                      {buffer_of(bias ? *bias : input), bias_strides.span()}};
  KernelArgs tail;
  tail.add(compute_scalar(input.dtype(), eps))
      .add(cl_int{weight != nullptr})
      .add(cl_int{bias != nullptr});
  launch_elementwise(device, device.program(KernelSource::Elementwise, input.dtype()), "batch_norm",
                     op, out.sizes(), operands, tail);
}

// The channels (dim 1) of an (N, C, ...) input as groups, every other dim as their members, for
// operands with `strides` over input's shape.
GroupShape channel_groups(std::string_view op, const TensorView& input,
                          const OperandStrides& strides) {
  plugin::DimValues<bool> reduced(static_cast<size_t>(input.dim()), true);
  reduced[1] = false;
  return split_groups(input.sizes(), reduced, strides, op);
}

}  // namespace

void batch_norm_inference_out(const TensorView& input, const TensorView* weight,
                              const TensorView* bias, const TensorView& running_mean,
                              const TensorView& running_var, double eps, const TensorView& out) {
  constexpr std::string_view op = "batch_norm";
  plugin::require_dtype_of<plugin::kernel_dtypes::batch_norm_inference_out>(out.dtype());
  // The meta step converted every per-channel tensor to input's dtype.
  plugin::require_dtypes(op,
                         {{"out", &out},
                          {"running_mean", &running_mean},
                          {"running_var", &running_var},
                          {"weight", weight},
                          {"bias", bias}},
                         input.dtype());
  normalize_with_running_statistics(op, input, weight, bias, running_mean, running_var, eps, out);
}

// Training: each channel's batch statistics, by a group kernel per channel, which also writes
// save_mean and save_invstd. Evaluation: the running statistics, as batch_norm_inference (the
// statistics outputs are empty). The running statistics are never written: batch_norm updates
// them.
void native_batch_norm_out(const TensorView& input, const TensorView* weight,
                           const TensorView* bias, const TensorView* running_mean,
                           const TensorView* running_var, bool training,
                           double /*momentum: batch_norm reads it*/, double eps,
                           const TensorView& out, const TensorView& save_mean,
                           const TensorView& save_invstd) {
  constexpr std::string_view op = "native_batch_norm";
  plugin::require_dtype_of<plugin::kernel_dtypes::native_batch_norm_out>(input.dtype());
  plugin::require_dtypes(op,
                         {{"out", &out},
                          {"save_mean", &save_mean},
                          {"save_invstd", &save_invstd},
                          {"running_mean", running_mean},
                          {"running_var", running_var},
                          {"weight", weight},
                          {"bias", bias}},
                         input.dtype());
  if (!training) {
    plugin::check(running_mean && running_var,
                  std::string(op) + ": evaluation needs running_mean and running_var");
    normalize_with_running_statistics(op, input, weight, bias, *running_mean, *running_var, eps,
                                      out);
    return;
  }
  Device& device = device_of(out);
  device.require_double_precision_for(op, input.dtype());
  plugin::check(input.dim() >= 2,
                std::string(op) + ": the input needs a channel dimension (dim 1)");
  enum Operand : size_t { kInput, kOut, kMean, kInvstd, kWeight, kBias };
  const GroupShape shape =
      channel_groups(op, input,
                     {input.strides(), out.strides(), channel_strides(input, &save_mean).span(),
                      channel_strides(input, &save_invstd).span(),
                      channel_strides(input, weight).span(), channel_strides(input, bias).span()});
  if (shape.groups() == 0) return;
  const Buffer in = buffer_of(input);
  KernelArgs args;
  args.add_group_params(shape)
      .add_grouped(in, shape, kInput)
      .add_grouped(buffer_of(out), shape, kOut)
      .add_per_group(buffer_of(save_mean), shape, kMean)
      .add_per_group(buffer_of(save_invstd), shape, kInvstd)
      .add_per_group(weight ? buffer_of(*weight) : in, shape, kWeight)
      .add_per_group(bias ? buffer_of(*bias) : in, shape, kBias)
      .add(cl_int{weight != nullptr})
      .add(cl_int{bias != nullptr})
      .add(accumulator_scalar(device, input.dtype(), eps));
  launch(device, device.program(KernelSource::Normalization, input.dtype()), "batch_norm_training",
         args, group_work(device, shape));
}

// One group kernel per channel, reading save_mean and save_invstd when train, else running_mean
// and running_var (the meta step requires the pair a mode reads, of input's dtype).
void native_batch_norm_backward_out(const TensorView& grad_out, const TensorView& input,
                                    const TensorView* weight, const TensorView* running_mean,
                                    const TensorView* running_var, const TensorView* save_mean,
                                    const TensorView* save_invstd, bool train, double eps,
                                    const TensorView& out0, const TensorView& out1,
                                    const TensorView& out2) {
  constexpr std::string_view op = "native_batch_norm_backward";
  plugin::require_dtype_of<plugin::kernel_dtypes::native_batch_norm_backward_out>(input.dtype());
  plugin::require_dtypes(op,
                         {{"grad_out", &grad_out},
                          {"weight", weight},
                          {"running_mean", running_mean},
                          {"running_var", running_var},
                          {"save_mean", save_mean},
                          {"save_invstd", save_invstd},
                          {"outputs", &out0},
                          {"outputs", &out1},
                          {"outputs", &out2}},
                         input.dtype());
  const TensorView* mean = train ? save_mean : running_mean;
  const TensorView* spread = train ? save_invstd : running_var;
  plugin::check(mean && spread,
                std::string(op) + (train ? ": train=true needs save_mean and save_invstd"
                                         : ": train=false needs running_mean and running_var"));
  Device& device = device_of(out0);
  device.require_double_precision_for(op, input.dtype());
  plugin::check(input.dim() >= 2,
                std::string(op) + ": the input needs a channel dimension (dim 1)");
  enum Operand : size_t {
    kGrad,
    kInput,
    kGradInput,
    kMean,
    kSpread,
    kWeight,
    kGradWeight,
    kGradBias
  };
  const GroupShape shape = channel_groups(
      op, input,
      {grad_out.strides(), input.strides(), out0.strides(), channel_strides(input, mean).span(),
       channel_strides(input, spread).span(), channel_strides(input, weight).span(),
       channel_strides(input, &out1).span(), channel_strides(input, &out2).span()});
  if (shape.groups() == 0) return;
  const Buffer in = buffer_of(input);
  KernelArgs args;
  args.add_group_params(shape)
      .add_grouped(buffer_of(grad_out), shape, kGrad)
      .add_grouped(in, shape, kInput)
      .add_grouped(buffer_of(out0), shape, kGradInput)
      .add_per_group(buffer_of(*mean), shape, kMean)
      .add_per_group(buffer_of(*spread), shape, kSpread)
      .add_per_group(weight ? buffer_of(*weight) : in, shape, kWeight)
      .add_per_group(buffer_of(out1), shape, kGradWeight)
      .add_per_group(buffer_of(out2), shape, kGradBias)
      .add(cl_int{weight != nullptr})
      .add(cl_int{train})
      .add(accumulator_scalar(device, input.dtype(), eps));
  launch(device, device.program(KernelSource::Normalization, input.dtype()), "batch_norm_backward",
         args, group_work(device, shape));
}

}  // namespace bp::opencl
