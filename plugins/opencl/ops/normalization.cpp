// softmax, log_softmax, native_layer_norm and rms_norm (kernels/normalization.cl): group
// kernels whose groups are normalised by their own statistics; batch_norm_inference, with
// running statistics, an elementwise kernel (kernels/elementwise.cl). Floating dtypes only, as in
// the CPU backend.
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

// out = (input - running_mean) / sqrt(running_var + eps) * weight + bias along dim 1, the
// channels: the per-channel tensors are walked with stride 0 in every other dim.
void batch_norm_inference_out(const TensorView& input, const TensorView* weight,
                              const TensorView* bias, const TensorView& running_mean,
                              const TensorView& running_var, double eps, const TensorView& out) {
  constexpr std::string_view op = "batch_norm";
  plugin::require_dtype_of<plugin::kernel_dtypes::batch_norm_inference_out>(out.dtype());
  Device& device = device_of(out);
  // The meta step converted every per-channel tensor to input's dtype.
  plugin::require_dtypes(op,
                         {{"out", &out},
                          {"running_mean", &running_mean},
                          {"running_var", &running_var},
                          {"weight", weight},
                          {"bias", bias}},
                         input.dtype());
  device.require_double_precision_for(op, input.dtype());
  plugin::check(input.dim() >= 2,
                std::string(op) + ": the input needs a channel dimension (dim 1)");
  if (out.numel() == 0) return;

  // A per-channel tensor's strides over input's shape: its own along the channels, else 0. An
  // absent weight or bias is not read; input stands in for it.
  const auto channel_strides = [&](const TensorView* parameter) {
    plugin::DimValues<int64_t> strides(static_cast<size_t>(input.dim()), 0);
    if (parameter) strides[1] = parameter->stride(0);
    return strides;
  };
  const auto mean_strides = channel_strides(&running_mean),
             var_strides = channel_strides(&running_var);
  const auto weight_strides = channel_strides(weight), bias_strides = channel_strides(bias);
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

}  // namespace bp::opencl
