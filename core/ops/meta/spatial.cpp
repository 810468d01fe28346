// Meta functions of the ops that slide a window over the height and width of an (N, C, H, W)
// input: conv2d and the 2-D pooling ops, and their backward ops. The window arithmetic is the
// SDK's (window2d.hpp), so the shapes computed here are the shapes every backend's kernels read.
#include "meta_support.h"

#include <core_generated/MetaFunctions.h>

#include <backplane/sdk/window2d.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string>

namespace bp::meta {
namespace {

using plugin::Window2d;

void check_4d(std::string_view op, const char* name, const Tensor& t) {
  if (t.dim() != 4) {
    throw Error(
        fmt::format("{}: expected a 4-D {} (N, C, H, W), got shape {}{}", op, name,
                    detail::format_shape(t.sizes()),
                    t.dim() == 3 ? "; for one image, add the batch dim with .unsqueeze(0)" : ""));
  }
}

// An int[2] argument holds one value (for both dims) or two; `minimum` is the smallest valid
// value. `allow_empty`: pooling's stride, whose [] means the kernel size.
void check_pair(std::string_view op, const char* name, IntArrayRef values, int64_t minimum,
                bool allow_empty = false) {
  if (values.size() > 2 || (values.empty() && !allow_empty)) {
    throw Error(fmt::format("{}: {} must be one int or two ints (height, width), got {} values", op,
                            name, values.size()));
  }
  for (int64_t v : values) {
    if (v < minimum) {
      throw Error(fmt::format("{}: {} must be {} for every dim, got {}", op, name,
                              minimum == 0 ? "non-negative" : "positive",
                              detail::format_shape(values)));
    }
  }
}

// What an op calls its window's kernel size along dim `d`: pooling's kernel_size argument, or
// conv2d's weight dims.
enum class KernelArgument { KernelSize, Weight };

std::string kernel_name(KernelArgument kernel, int d) {
  return kernel == KernelArgument::KernelSize ? fmt::format("kernel_size[{}]", d)
                                              : fmt::format("weight.size({})", 2 + d);
}

// Refuses a window whose size arithmetic along dim `d` leaves int64_t, naming the arguments it
// comes from: a wrapped size would make an output larger than its input and kernels read and
// write past both.
[[noreturn]] void throw_window_overflow(std::string_view op, const Tensor& input,
                                        const Window2d& window, KernelArgument kernel, int d,
                                        plugin::WindowOverflow overflow) {
  const std::string kernel_d = kernel_name(kernel, d);
  switch (overflow) {
    case plugin::WindowOverflow::Span:
      throw Error(fmt::format(
          "{}: dilation[{}]={} with {}={} overflows int64: a window spans dilation * (kernel "
          "size - 1) + 1 elements; use a smaller dilation or kernel",
          op, d, window.dilation[d], kernel_d, window.kernel[d]));
    case plugin::WindowOverflow::PaddedInput:
      throw Error(fmt::format(
          "{}: padding[{}]={} on an input {} of {} overflows int64: the padded input spans "
          "size + 2 * padding elements; use a smaller padding",
          op, d, window.padding[d], d == 0 ? "height" : "width", input.size(2 + d)));
    case plugin::WindowOverflow::LastWindow:
      throw Error(fmt::format(
          "{}: stride[{}]={} with {}={} and dilation[{}]={} overflows int64 with ceil_mode: the "
          "last window would end past the largest int64; use a smaller stride or kernel",
          op, d, window.stride[d], kernel_d, window.kernel[d], d, window.dilation[d]));
    case plugin::WindowOverflow::None: break;
  }
  throw Error(ErrorCode::Internal, fmt::format("{}: a window reported no overflow", op));
}

// The (N, C, H_out, W_out) output of `window` over `input`; a size that overflows int64 is an
// error naming its arguments, and an empty output one naming the sizes of the dims that leave
// no window, as in PyTorch.
DimVector windowed_shape(std::string_view op, const Tensor& input, int64_t channels,
                         const Window2d& window, KernelArgument kernel, bool ceil_mode) {
  DimVector shape{input.size(0), channels, 0, 0};
  for (int d = 0; d < 2; ++d) {
    const plugin::WindowOutputSize size =
        plugin::checked_window_output_size(window, d, input.size(2 + d), ceil_mode);
    if (size.overflow != plugin::WindowOverflow::None) {
      throw_window_overflow(op, input, window, kernel, d, size.overflow);
    }
    shape[2 + d] = size.size;
  }
  if (shape[2] >= 1 && shape[3] >= 1) return shape;
  const std::string advice =
      fmt::format("so the output would be {}x{}; use a smaller kernel or dilation, or more padding",
                  shape[2], shape[3]);
  if (shape[2] < 1 && shape[3] < 1) {
    throw Error(fmt::format(
        "{}: the input's spatial size {}x{} (with padding {}x{}) is smaller than the window's "
        "extent {}x{}, {}",
        op, input.size(2), input.size(3), window.padding[0], window.padding[1], window.span(0),
        window.span(1), advice));
  }
  const int d = shape[2] < 1 ? 0 : 1;
  throw Error(fmt::format(
      "{}: the input's {} {} (with padding {} on each side) is smaller than the window's extent "
      "{} along it, {}",
      op, d == 0 ? "height" : "width", input.size(2 + d), window.padding[d], window.span(d),
      advice));
}

// Pooling pads at most half the kernel on each side, so every window holds an input element.
void check_pooling_padding(std::string_view op, const Window2d& window) {
  for (int d = 0; d < 2; ++d) {
    if (window.padding[d] > window.kernel[d] / 2) {
      throw Error(
          fmt::format("{}: padding must be at most half the kernel size, got padding {} "
                      "for a kernel of {}",
                      op, window.padding[d], window.kernel[d]));
    }
  }
}

Window2d checked_pooling_window(std::string_view op, const Tensor& self, IntArrayRef kernel_size,
                                IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation) {
  check_4d(op, "input", self);
  check_pair(op, "kernel_size", kernel_size, 1);
  check_pair(op, "stride", stride, 1, /*allow_empty=*/true);
  check_pair(op, "padding", padding, 0);
  check_pair(op, "dilation", dilation, 1);
  const Window2d window = plugin::pooling_window(kernel_size, stride, padding, dilation);
  check_pooling_padding(op, window);
  return window;
}

// The (N, C_out, H_out, W_out) output of a convolution of input (N, C_in, H, W) by weight
// (C_out, C_in / groups, kH, kW) of input's dtype, checking both and the window's arguments;
// `op` names the op in messages.
DimVector checked_convolution_shape(std::string_view op, const Tensor& input, const Tensor& weight,
                                    IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation,
                                    int64_t groups) {
  check_4d(op, "input", input);
  check_4d(op, "weight", weight);
  if (weight.size(2) < 1 || weight.size(3) < 1) {
    throw Error(
        fmt::format("{}: weight of shape {} has a {}x{} kernel; a kernel must be at "
                    "least 1x1",
                    op, detail::format_shape(weight.sizes()), weight.size(2), weight.size(3)));
  }
  support::check_same_dtype(weight, input.dtype(), fmt::format("{}: weight", op));
  check_pair(op, "stride", stride, 1);
  check_pair(op, "padding", padding, 0);
  check_pair(op, "dilation", dilation, 1);
  if (groups < 1) throw Error(fmt::format("{}: groups must be positive, got {}", op, groups));
  const int64_t out_channels = weight.size(0);
  const std::optional<int64_t> in_channels = plugin::checked_mul(weight.size(1), groups);
  if (!in_channels) {
    throw Error(
        fmt::format("{}: groups={} with weight of shape {} overflows int64: the input "
                    "would need weight.size(1) * groups channels, but has {}",
                    op, groups, detail::format_shape(weight.sizes()), input.size(1)));
  }
  if (input.size(1) != *in_channels) {
    throw Error(
        fmt::format("{}: the input has {} channels, but weight of shape {} with "
                    "groups={} expects {} (weight.size(1) * groups)",
                    op, input.size(1), detail::format_shape(weight.sizes()), groups, *in_channels));
  }
  if (out_channels % groups != 0 || out_channels == 0) {
    throw Error(
        fmt::format("{}: weight's {} output channels must be a positive multiple of "
                    "groups={}",
                    op, out_channels, groups));
  }
  const Window2d window{{weight.size(2), weight.size(3)},
                        plugin::expand_pair(stride, {1, 1}),
                        plugin::expand_pair(padding, {0, 0}),
                        plugin::expand_pair(dilation, {1, 1})};
  return windowed_shape(op, input, out_channels, window, KernelArgument::Weight,
                        /*ceil_mode=*/false);
}

// A backward op's grad_output has the shape its forward op's output has, and the dtype of the
// forward op's input.
void check_grad_output(std::string_view op, const Tensor& grad_output, IntArrayRef forward_shape,
                       DType dtype) {
  if (!std::equal(grad_output.sizes().begin(), grad_output.sizes().end(), forward_shape.begin(),
                  forward_shape.end())) {
    throw Error(fmt::format(
        "{}: expected grad_output of shape {}, the forward op's output for these arguments, "
        "got shape {}",
        op, detail::format_shape(forward_shape), detail::format_shape(grad_output.sizes())));
  }
  support::check_same_dtype(grad_output, dtype, fmt::format("{}: grad_output", op));
}

// max_pool2d's output shape, checking its arguments.
DimVector max_pooled_shape(std::string_view op, const Tensor& self, IntArrayRef kernel_size,
                           IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation,
                           bool ceil_mode) {
  const Window2d window = checked_pooling_window(op, self, kernel_size, stride, padding, dilation);
  return windowed_shape(op, self, self.size(1), window, KernelArgument::KernelSize, ceil_mode);
}

// avg_pool2d's output shape, checking its arguments.
DimVector avg_pooled_shape(std::string_view op, const Tensor& self, IntArrayRef kernel_size,
                           IntArrayRef stride, IntArrayRef padding, bool ceil_mode,
                           std::optional<int64_t> divisor_override) {
  static constexpr int64_t kNoDilation = 1;
  const Window2d window =
      checked_pooling_window(op, self, kernel_size, stride, padding, kNoDilation);
  if (divisor_override && *divisor_override == 0) {
    throw Error(fmt::format("{}: divisor_override must not be zero", op));
  }
  // Kernels divide by a window's area, at most the kernel's.
  if (!plugin::checked_mul(window.kernel[0], window.kernel[1])) {
    throw Error(
        fmt::format("{}: kernel_size [{}, {}] overflows int64: an average "
                    "divides by up to kernel_size[0] * kernel_size[1] elements; use a "
                    "smaller kernel",
                    op, window.kernel[0], window.kernel[1]));
  }
  return windowed_shape(op, self, self.size(1), window, KernelArgument::KernelSize, ceil_mode);
}

// adaptive_avg_pool2d's checks of self and output_size.
void check_adaptive_pooling(std::string_view op, const Tensor& self, IntArrayRef output_size) {
  check_4d(op, "input", self);
  check_pair(op, "output_size", output_size, 1);
  if (self.size(2) == 0 || self.size(3) == 0) {
    throw Error(fmt::format("{}: expected an input with non-zero height and width, got shape {}",
                            op, detail::format_shape(self.sizes())));
  }
  const plugin::Pair size = plugin::expand_pair(output_size, {1, 1});
  for (int d = 0; d < 2; ++d) {
    if (!plugin::adaptive_arithmetic_fits(self.size(2 + d), size[d])) {
      throw Error(
          fmt::format("{}: output_size[{}]={} over an input {} of {} overflows int64: "
                      "window bounds are computed from output_size * size; use a "
                      "smaller output_size",
                      op, d, size[d], d == 0 ? "height" : "width", self.size(2 + d)));
    }
  }
}

}  // namespace

// conv2d: input (N, C_in, H, W) and weight (C_out, C_in / groups, kH, kW) share one dtype, and
// so does bias, (C_out), when present; groups divides C_in and C_out. out is
// (N, C_out, H_out, W_out) with input's dtype.
std::array<OutputSpec, 1> conv2d_out(Tensor& input, Tensor& weight, std::optional<Tensor>& bias,
                                     IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation,
                                     int64_t groups) {
  const Device device = support::common_device({&input, &weight, support::present(bias)});
  DimVector shape =
      checked_convolution_shape("conv2d", input, weight, stride, padding, dilation, groups);
  const int64_t out_channels = weight.size(0);
  if (Tensor* b = support::present(bias)) {
    support::check_same_dtype(*b, input.dtype(), "conv2d: bias");
    if (b->dim() != 1 || b->size(0) != out_channels) {
      throw Error(
          fmt::format("conv2d: expected a bias of shape [{}] (one per output channel), "
                      "got shape {}",
                      out_channels, detail::format_shape(b->sizes())));
    }
  }
  return {OutputSpec{std::move(shape), input.dtype(), device}};
}

// convolution_backward: input and weight as conv2d takes them, and grad_output of conv2d's
// output shape and input's dtype. Outputs: the gradients of input (its shape), weight (its
// shape) and bias ([C_out]), all of input's dtype.
std::array<OutputSpec, 3> convolution_backward_out(Tensor& grad_output, Tensor& input,
                                                   Tensor& weight, IntArrayRef stride,
                                                   IntArrayRef padding, IntArrayRef dilation,
                                                   int64_t groups) {
  constexpr std::string_view op = "convolution_backward";
  const Device device = support::common_device({&grad_output, &input, &weight});
  const DimVector forward_shape =
      checked_convolution_shape(op, input, weight, stride, padding, dilation, groups);
  check_grad_output(op, grad_output, forward_shape, input.dtype());
  const DType dtype = input.dtype();
  return {OutputSpec{DimVector(input.sizes()), dtype, device},
          OutputSpec{DimVector(weight.sizes()), dtype, device},
          OutputSpec{DimVector{weight.size(0)}, dtype, device}};
}

// max_pool2d: an (N, C, H, W) self; padding at most half the kernel. out is
// (N, C, H_out, W_out) with self's dtype.
std::array<OutputSpec, 1> max_pool2d_out(Tensor& self, IntArrayRef kernel_size, IntArrayRef stride,
                                         IntArrayRef padding, IntArrayRef dilation,
                                         bool ceil_mode) {
  const Device device = support::common_device({&self});
  return {OutputSpec{
      max_pooled_shape("max_pool2d", self, kernel_size, stride, padding, dilation, ceil_mode),
      self.dtype(), device}};
}

// max_pool2d_with_indices: max_pool2d's rules; out, then indices (Int64) of out's shape.
std::array<OutputSpec, 2> max_pool2d_with_indices_out(Tensor& self, IntArrayRef kernel_size,
                                                      IntArrayRef stride, IntArrayRef padding,
                                                      IntArrayRef dilation, bool ceil_mode) {
  const Device device = support::common_device({&self});
  DimVector shape = max_pooled_shape("max_pool2d_with_indices", self, kernel_size, stride, padding,
                                     dilation, ceil_mode);
  return {OutputSpec{shape, self.dtype(), device},
          OutputSpec{std::move(shape), DType::Int64, device}};
}

// max_pool2d_with_indices_backward: self and the window as max_pool2d takes them; grad_output
// of max_pool2d's output shape and self's dtype; indices (Int64) of the same shape, each an
// index into its H * W input plane. grad_input has self's shape and dtype.
std::array<OutputSpec, 1> max_pool2d_with_indices_backward_grad_input(
    Tensor& grad_output, Tensor& self, IntArrayRef kernel_size, IntArrayRef stride,
    IntArrayRef padding, IntArrayRef dilation, bool ceil_mode, Tensor& indices) {
  constexpr std::string_view op = "max_pool2d_with_indices_backward";
  const Device device = support::common_device({&grad_output, &self, &indices});
  const DimVector forward_shape =
      max_pooled_shape(op, self, kernel_size, stride, padding, dilation, ceil_mode);
  check_grad_output(op, grad_output, forward_shape, self.dtype());
  if (indices.dtype() != DType::Int64 || !std::equal(indices.sizes().begin(), indices.sizes().end(),
                                                     forward_shape.begin(), forward_shape.end())) {
    throw Error(fmt::format(
        "{}: expected {} indices of shape {} (max_pool2d_with_indices' second output), got "
        "{} indices of shape {}",
        op, dtype_name(DType::Int64), detail::format_shape(forward_shape),
        dtype_name(indices.dtype()), detail::format_shape(indices.sizes())));
  }
  return {OutputSpec{DimVector(self.sizes()), self.dtype(), device}};
}

// avg_pool2d: as max_pool2d without dilation; divisor_override, when given, is not zero.
std::array<OutputSpec, 1> avg_pool2d_out(Tensor& self, IntArrayRef kernel_size, IntArrayRef stride,
                                         IntArrayRef padding, bool ceil_mode,
                                         bool /*count_include_pad: both values are valid*/,
                                         std::optional<int64_t> divisor_override) {
  const Device device = support::common_device({&self});
  return {OutputSpec{avg_pooled_shape("avg_pool2d", self, kernel_size, stride, padding, ceil_mode,
                                      divisor_override),
                     self.dtype(), device}};
}

// avg_pool2d_backward: self and the window as avg_pool2d takes them, and grad_output of
// avg_pool2d's output shape and self's dtype. grad_input has self's shape and dtype.
std::array<OutputSpec, 1> avg_pool2d_backward_grad_input(
    Tensor& grad_output, Tensor& self, IntArrayRef kernel_size, IntArrayRef stride,
    IntArrayRef padding, bool ceil_mode, bool /*count_include_pad: both values are valid*/,
    std::optional<int64_t> divisor_override) {
  constexpr std::string_view op = "avg_pool2d_backward";
  const Device device = support::common_device({&grad_output, &self});
  const DimVector forward_shape =
      avg_pooled_shape(op, self, kernel_size, stride, padding, ceil_mode, divisor_override);
  check_grad_output(op, grad_output, forward_shape, self.dtype());
  return {OutputSpec{DimVector(self.sizes()), self.dtype(), device}};
}

// adaptive_avg_pool2d: an (N, C, H, W) self with H, W > 0; output_size is one or
// two positive ints. out is (N, C, output_size...).
std::array<OutputSpec, 1> adaptive_avg_pool2d_out(Tensor& self, IntArrayRef output_size) {
  const Device device = support::common_device({&self});
  check_adaptive_pooling("adaptive_avg_pool2d", self, output_size);
  const plugin::Pair size = plugin::expand_pair(output_size, {1, 1});
  return {
      OutputSpec{DimVector{self.size(0), self.size(1), size[0], size[1]}, self.dtype(), device}};
}

// _adaptive_avg_pool2d_backward: self as adaptive_avg_pool2d takes it, and an
// (N, C, H_out, W_out) grad_output of self's dtype, whose H_out and W_out are the forward op's
// output_size. grad_input has self's shape and dtype.
std::array<OutputSpec, 1> _adaptive_avg_pool2d_backward_out(Tensor& grad_output, Tensor& self) {
  constexpr std::string_view op = "_adaptive_avg_pool2d_backward";
  const Device device = support::common_device({&grad_output, &self});
  check_4d(op, "grad_output", grad_output);
  check_adaptive_pooling(op, self, IntArrayRef(grad_output.sizes().data() + 2, 2));
  const DimVector forward_shape{self.size(0), self.size(1), grad_output.size(2),
                                grad_output.size(3)};
  check_grad_output(op, grad_output, forward_shape, self.dtype());
  return {OutputSpec{DimVector(self.sizes()), self.dtype(), device}};
}

}  // namespace bp::meta
