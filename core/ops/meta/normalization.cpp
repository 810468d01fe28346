// Meta functions of softmax, layer norm and batch norm, and of their gradients. All tensors are
// on one device; outputs are contiguous.
#include "meta_support.h"

#include <core_generated/MetaFunctions.h>

#include <fmt/format.h>

#include <algorithm>

namespace bp::meta {

// softmax, log_softmax: self and out have the dtype argument, else self's dtype (PyTorch has
// no integer softmax; dtype=Float32 converts an integer input). out has self's shape. The
// kernel wraps dim itself; it is in range (0 or -1 for a 0-dim self).
std::array<OutputSpec, 1> softmax_like(Tensor& self, int64_t dim, std::optional<DType> dtype) {
  const Device device = support::common_device({&self});
  detail::wrap_dim("softmax/log_softmax", dim, self.dim());
  const DType out_dtype = dtype.value_or(self.dtype());
  DimVector shape(self.sizes());
  if (self.dtype() != out_dtype) self = self.to(out_dtype);
  return {OutputSpec{std::move(shape), out_dtype, device}};
}

namespace {

// The gradient of softmax or log_softmax (`op`) from its output: grad_output and output have one
// shape and one floating dtype; input_dtype is floating, and grad_input has it, as do
// grad_output and output by the time the kernel reads them (converted here where softmax
// computed in a wider dtype than its input). dim is in range.
std::array<OutputSpec, 1> softmax_backward(std::string_view op, Tensor& grad_output,
                                           Tensor& output, int64_t dim, DType input_dtype) {
  const Device device = support::common_device({&grad_output, &output});
  if (!std::ranges::equal(grad_output.sizes(), output.sizes())) {
    throw Error(fmt::format("{}: expected grad_output and output of one shape, got {} and {}", op,
                            detail::format_shape(grad_output.sizes()),
                            detail::format_shape(output.sizes())));
  }
  support::check_same_dtype(output, grad_output.dtype(), fmt::format("{}: output", op));
  if (!is_floating_point(input_dtype)) {
    throw Error(fmt::format("{}: input_dtype must be a floating dtype (softmax's input), got {}",
                            op, dtype_name(input_dtype)));
  }
  detail::wrap_dim(op, dim, grad_output.dim());
  if (grad_output.dtype() != input_dtype) {
    grad_output = grad_output.to(input_dtype);
    output = output.to(input_dtype);
  }
  return {OutputSpec{DimVector(grad_output.sizes()), input_dtype, device}};
}

}  // namespace

// _softmax_backward_data: see softmax_backward.
std::array<OutputSpec, 1> _softmax_backward_data_out(Tensor& grad_output, Tensor& output,
                                                     int64_t dim, DType input_dtype) {
  return softmax_backward("_softmax_backward_data", grad_output, output, dim, input_dtype);
}

// _log_softmax_backward_data: see softmax_backward.
std::array<OutputSpec, 1> _log_softmax_backward_data_out(Tensor& grad_output, Tensor& output,
                                                         int64_t dim, DType input_dtype) {
  return softmax_backward("_log_softmax_backward_data", grad_output, output, dim, input_dtype);
}

namespace {

// Layer norm and RMS norm normalise over the trailing dims of `input` that `normalized_shape`
// names.
void check_normalized_input(std::string_view op, const Tensor& input,
                            IntArrayRef normalized_shape) {
  if (normalized_shape.empty()) {
    throw Error(
        fmt::format("{}: expected normalized_shape to have at least one element, got []", op));
  }
  const int64_t axis = input.dim() - static_cast<int64_t>(normalized_shape.size());
  if (axis < 0 ||
      !std::equal(normalized_shape.begin(), normalized_shape.end(), input.sizes().begin() + axis)) {
    const std::string shape = detail::format_shape(normalized_shape);
    throw Error(fmt::format(
        "{}: given normalized_shape {}, expected an input of shape [*, {}], "
        "but got an input of shape {}",
        op, shape, shape.substr(1, shape.size() - 2), detail::format_shape(input.sizes())));
  }
}

// An affine parameter (weight, bias) has exactly `expected_shape` and is converted to `dtype`.
void prepare_parameter(std::string_view op, const char* name, Tensor& parameter,
                       IntArrayRef expected_shape, DType dtype) {
  if (!std::equal(expected_shape.begin(), expected_shape.end(), parameter.sizes().begin(),
                  parameter.sizes().end())) {
    throw Error(fmt::format("{}: expected {} of shape {}, but got {} of shape {}", op, name,
                            detail::format_shape(expected_shape), name,
                            detail::format_shape(parameter.sizes())));
  }
  if (parameter.dtype() != dtype) parameter = parameter.to(dtype);
}

}  // namespace

// native_layer_norm: weight and bias, when present, have exactly normalized_shape and are
// converted to input's dtype; input's trailing dims equal normalized_shape. Outputs: out with
// input's shape, then mean and rstd (1 / sqrt(var + eps), biased variance) with input's leading
// dims and a 1 for each normalized dim; all three have input's dtype.
std::array<OutputSpec, 3> native_layer_norm_out(Tensor& input, IntArrayRef normalized_shape,
                                                std::optional<Tensor>& weight,
                                                std::optional<Tensor>& bias,
                                                double /*eps: any value is valid*/) {
  const Device device =
      support::common_device({&input, support::present(weight), support::present(bias)});
  check_normalized_input("native_layer_norm", input, normalized_shape);
  const DType dtype = input.dtype();
  if (Tensor* w = support::present(weight)) {
    prepare_parameter("native_layer_norm", "weight", *w, normalized_shape, dtype);
  }
  if (Tensor* b = support::present(bias)) {
    prepare_parameter("native_layer_norm", "bias", *b, normalized_shape, dtype);
  }
  DimVector stats_shape(input.sizes());
  for (int64_t d = input.dim() - static_cast<int64_t>(normalized_shape.size()); d < input.dim();
       ++d) {
    stats_shape[d] = 1;
  }
  return {OutputSpec{DimVector(input.sizes()), dtype, device},
          OutputSpec{stats_shape, dtype, device}, OutputSpec{stats_shape, dtype, device}};
}

// native_layer_norm_backward: input and normalized_shape as native_layer_norm takes them;
// grad_out has input's shape and dtype; mean and rstd hold one value per normalised group (any
// shape of that many elements, as native_layer_norm returns them) and are converted to input's
// dtype, as are weight and bias, which have exactly normalized_shape when present (bias only
// for that check: the gradients do not depend on it). grad_out, input, mean, rstd and weight
// reach the kernel contiguous, mean and rstd 1-D. Outputs: the gradient of input (input's
// shape), then those of weight and bias (normalized_shape), all with input's dtype.
std::array<OutputSpec, 3> native_layer_norm_backward_out(Tensor& grad_out, Tensor& input,
                                                         IntArrayRef normalized_shape,
                                                         Tensor& mean, Tensor& rstd,
                                                         std::optional<Tensor>& weight,
                                                         std::optional<Tensor>& bias) {
  constexpr std::string_view op = "native_layer_norm_backward";
  const Device device = support::common_device(
      {&grad_out, &input, &mean, &rstd, support::present(weight), support::present(bias)});
  check_normalized_input(op, input, normalized_shape);
  const DType dtype = input.dtype();
  if (!std::ranges::equal(grad_out.sizes(), input.sizes())) {
    throw Error(fmt::format("{}: expected grad_out of input's shape {}, got {}", op,
                            detail::format_shape(input.sizes()),
                            detail::format_shape(grad_out.sizes())));
  }
  support::check_same_dtype(grad_out, dtype, "native_layer_norm_backward: grad_out");
  int64_t groups = 1;
  for (int64_t d = 0; d < input.dim() - static_cast<int64_t>(normalized_shape.size()); ++d) {
    groups *= input.size(d);
  }
  for (auto [name, stats] : {std::pair{"mean", &mean}, std::pair{"rstd", &rstd}}) {
    if (stats->numel() != groups) {
      throw Error(fmt::format(
          "{}: expected {} with one value per normalised group ({} values, as "
          "native_layer_norm returns it), got shape {}",
          op, name, groups, detail::format_shape(stats->sizes())));
    }
    if (stats->dtype() != dtype) *stats = stats->to(dtype);
    *stats = stats->reshape({groups}).contiguous();
  }
  if (Tensor* w = support::present(weight)) {
    prepare_parameter(op, "weight", *w, normalized_shape, dtype);
    *w = w->contiguous();
  }
  if (Tensor* b = support::present(bias)) {
    prepare_parameter(op, "bias", *b, normalized_shape, dtype);
  }
  grad_out = grad_out.contiguous();
  input = input.contiguous();
  const DimVector parameter_shape(normalized_shape);
  return {OutputSpec{DimVector(input.sizes()), dtype, device},
          OutputSpec{parameter_shape, dtype, device}, OutputSpec{parameter_shape, dtype, device}};
}

// rms_norm: the rules of native_layer_norm; one output with input's shape and dtype. eps, when
// given, is not negative.
std::array<OutputSpec, 1> rms_norm_out(Tensor& input, IntArrayRef normalized_shape,
                                       std::optional<Tensor>& weight, std::optional<double> eps) {
  const Device device = support::common_device({&input, support::present(weight)});
  check_normalized_input("rms_norm", input, normalized_shape);
  if (Tensor* w = support::present(weight)) {
    prepare_parameter("rms_norm", "weight", *w, normalized_shape, input.dtype());
  }
  if (eps && !(*eps >= 0)) {
    throw Error(fmt::format("rms_norm: eps must be a non-negative number, got {}", *eps));
  }
  return {OutputSpec{DimVector(input.sizes()), input.dtype(), device}};
}

// batch_norm_inference: input has at least 2 dims, (N, C, ...); running_mean,
// running_var and the optional weight and bias are 1-D of C elements, converted to input's
// dtype. out has input's shape and dtype.
std::array<OutputSpec, 1> batch_norm_inference_out(Tensor& input, std::optional<Tensor>& weight,
                                                   std::optional<Tensor>& bias,
                                                   Tensor& running_mean, Tensor& running_var,
                                                   double eps) {
  const Device device = support::common_device(
      {&input, support::present(weight), support::present(bias), &running_mean, &running_var});
  constexpr std::string_view op = "batch_norm";
  if (input.dim() < 2) {
    throw Error(fmt::format("{}: expected an input of at least 2 dims (N, C, ...), got shape {}",
                            op, detail::format_shape(input.sizes())));
  }
  if (!(eps >= 0)) {
    throw Error(fmt::format("{}: eps must be a non-negative number, got {}", op, eps));
  }
  const IntArrayRef channels(input.sizes().data() + 1, 1);
  const DType dtype = input.dtype();
  prepare_parameter(op, "running_mean", running_mean, channels, dtype);
  prepare_parameter(op, "running_var", running_var, channels, dtype);
  if (Tensor* w = support::present(weight)) prepare_parameter(op, "weight", *w, channels, dtype);
  if (Tensor* b = support::present(bias)) prepare_parameter(op, "bias", *b, channels, dtype);
  return {OutputSpec{DimVector(input.sizes()), dtype, device}};
}

namespace {

// batch_norm's input, (N, C, ...), and eps; returns C.
int64_t checked_batch_norm_input(std::string_view op, const Tensor& input, double eps) {
  if (input.dim() < 2) {
    throw Error(fmt::format("{}: expected an input of at least 2 dims (N, C, ...), got shape {}",
                            op, detail::format_shape(input.sizes())));
  }
  if (!(eps >= 0)) {
    throw Error(fmt::format("{}: eps must be a non-negative number, got {}", op, eps));
  }
  return input.size(1);
}

// The per-channel statistics (running_mean and running_var, or save_mean and save_invstd) that
// a mode reads: both present, of C elements, converted to `dtype`.
void prepare_statistics(std::string_view op, const char* mean_name, std::optional<Tensor>& mean,
                        const char* var_name, std::optional<Tensor>& var, int64_t channels,
                        DType dtype, std::string_view mode) {
  if (!support::present(mean) || !support::present(var)) {
    throw Error(fmt::format("{}: {} needs {} and {}; pass both", op, mode, mean_name, var_name));
  }
  const IntArrayRef shape(&channels, 1);
  prepare_parameter(op, mean_name, *mean, shape, dtype);
  prepare_parameter(op, var_name, *var, shape, dtype);
}

}  // namespace

// native_batch_norm: batch_norm_inference's rules, with running_mean and running_var needed
// only when not training (where they normalise). Outputs of input's dtype: out with input's
// shape; save_mean and save_invstd of C elements when training, else empty ([0]).
std::array<OutputSpec, 3> native_batch_norm_out(Tensor& input, std::optional<Tensor>& weight,
                                                std::optional<Tensor>& bias,
                                                std::optional<Tensor>& running_mean,
                                                std::optional<Tensor>& running_var, bool training,
                                                double /*momentum: batch_norm reads it*/,
                                                double eps) {
  constexpr std::string_view op = "native_batch_norm";
  const Device device = support::common_device(
      {&input, support::present(weight), support::present(bias), support::present(running_mean),
       support::present(running_var)});
  const int64_t channels = checked_batch_norm_input(op, input, eps);
  const IntArrayRef channel_shape(&channels, 1);
  const DType dtype = input.dtype();
  if (!training || support::present(running_mean) || support::present(running_var)) {
    prepare_statistics(op, "running_mean", running_mean, "running_var", running_var, channels,
                       dtype, training ? "training with running statistics" : "evaluation");
  }
  if (Tensor* w = support::present(weight)) {
    prepare_parameter(op, "weight", *w, channel_shape, dtype);
  }
  if (Tensor* b = support::present(bias)) prepare_parameter(op, "bias", *b, channel_shape, dtype);
  const DimVector statistics{training ? channels : 0};
  return {OutputSpec{DimVector(input.sizes()), dtype, device},
          OutputSpec{statistics, dtype, device}, OutputSpec{statistics, dtype, device}};
}

// native_batch_norm_backward: grad_out has input's shape and dtype; the statistics the forward
// normalised with are needed, of C elements: save_mean and save_invstd when train, else
// running_mean and running_var. Outputs of input's dtype: the gradients of input (its shape),
// weight and bias ([C], also without a weight).
std::array<OutputSpec, 3> native_batch_norm_backward_out(
    Tensor& grad_out, Tensor& input, std::optional<Tensor>& weight,
    std::optional<Tensor>& running_mean, std::optional<Tensor>& running_var,
    std::optional<Tensor>& save_mean, std::optional<Tensor>& save_invstd, bool train,
    double eps) {
  constexpr std::string_view op = "native_batch_norm_backward";
  const Device device = support::common_device(
      {&grad_out, &input, support::present(weight), support::present(running_mean),
       support::present(running_var), support::present(save_mean),
       support::present(save_invstd)});
  const int64_t channels = checked_batch_norm_input(op, input, eps);
  const DType dtype = input.dtype();
  if (!std::equal(grad_out.sizes().begin(), grad_out.sizes().end(), input.sizes().begin(),
                  input.sizes().end())) {
    throw Error(fmt::format("{}: expected grad_out of input's shape {}, got shape {}", op,
                            detail::format_shape(input.sizes()),
                            detail::format_shape(grad_out.sizes())));
  }
  support::check_same_dtype(grad_out, dtype, "native_batch_norm_backward: grad_out");
  if (train) {
    prepare_statistics(op, "save_mean", save_mean, "save_invstd", save_invstd, channels, dtype,
                       "train=true");
  } else {
    prepare_statistics(op, "running_mean", running_mean, "running_var", running_var, channels,
                       dtype, "train=false");
  }
  if (Tensor* w = support::present(weight)) {
    prepare_parameter(op, "weight", *w, IntArrayRef(&channels, 1), dtype);
  }
  return {OutputSpec{DimVector(input.sizes()), dtype, device},
          OutputSpec{DimVector{channels}, dtype, device},
          OutputSpec{DimVector{channels}, dtype, device}};
}

}  // namespace bp::meta
