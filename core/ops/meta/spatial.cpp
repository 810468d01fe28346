// Meta functions of the ops that slide a window over the height and width of an (N, C, H, W)
// input: conv2d and the 2-D pooling ops. The window arithmetic is the SDK's (window2d.hpp), so
// the shapes computed here are the shapes every backend's kernels read.
#include "meta_support.h"

#include <core_generated/MetaFunctions.h>

#include <backplane/sdk/window2d.hpp>

#include <fmt/format.h>

namespace bp::meta {
namespace {

using plugin::Window2d;

void check_4d(std::string_view op, const char* name, const Tensor& t) {
  if (t.dim() != 4) {
    throw Error(fmt::format("{}: expected a 4-D {} (N, C, H, W), got shape {}{}", op, name,
                            detail::format_shape(t.sizes()),
                            t.dim() == 3 ? "; for one image, add the batch dim with .unsqueeze(0)"
                                         : ""));
  }
}

// An int[2] argument holds one value (for both dims) or two; `minimum` is the smallest valid
// value. `allow_empty`: pooling's stride, whose [] means the kernel size.
void check_pair(std::string_view op, const char* name, IntArrayRef values, int64_t minimum,
                bool allow_empty = false) {
  if (values.size() > 2 || (values.empty() && !allow_empty)) {
    throw Error(fmt::format("{}: {} must be one int or two ints (height, width), got {} values",
                            op, name, values.size()));
  }
  for (int64_t v : values) {
    if (v < minimum) {
      throw Error(fmt::format("{}: {} must be {} for every dim, got {}", op, name,
                              minimum == 0 ? "non-negative" : "positive",
                              detail::format_shape(values)));
    }
  }
}

void check_floating(std::string_view op, const Tensor& t) {
  if (!is_floating_point(t.dtype())) {
    throw Error(fmt::format("{}: expected a floating-point input, got {}; convert with "
                            ".to(bp::kFloat32)",
                            op, dtype_name(t.dtype())));
  }
}

// The (N, C, H_out, W_out) output of `window` over `input`; an empty output is an error naming
// the sizes of the dims that leave no window, as in PyTorch.
DimVector windowed_shape(std::string_view op, const Tensor& input, int64_t channels,
                         const Window2d& window, bool ceil_mode) {
  DimVector shape{input.size(0), channels, 0, 0};
  for (int d = 0; d < 2; ++d) {
    shape[2 + d] = plugin::window_output_size(window, d, input.size(2 + d), ceil_mode);
  }
  if (shape[2] >= 1 && shape[3] >= 1) return shape;
  const std::string advice = fmt::format(
      "so the output would be {}x{}; use a smaller kernel or dilation, or more padding", shape[2],
      shape[3]);
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
    if (window.padding[d] * 2 > window.kernel[d]) {
      throw Error(fmt::format("{}: padding must be at most half the kernel size, got padding {} "
                              "for a kernel of {}",
                              op, window.padding[d], window.kernel[d]));
    }
  }
}

Window2d checked_pooling_window(std::string_view op, const Tensor& self, IntArrayRef kernel_size,
                                IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation) {
  check_4d(op, "input", self);
  check_floating(op, self);
  check_pair(op, "kernel_size", kernel_size, 1);
  check_pair(op, "stride", stride, 1, /*allow_empty=*/true);
  check_pair(op, "padding", padding, 0);
  check_pair(op, "dilation", dilation, 1);
  const Window2d window = plugin::pooling_window(kernel_size, stride, padding, dilation);
  check_pooling_padding(op, window);
  return window;
}

}  // namespace

// conv2d: input (N, C_in, H, W) and weight (C_out, C_in / groups, kH, kW) share a floating-point
// dtype, and so does bias, (C_out), when present; groups divides C_in and C_out. out is
// (N, C_out, H_out, W_out) with input's dtype.
std::array<OutputSpec, 1> conv2d_out(Tensor& input, Tensor& weight, std::optional<Tensor>& bias,
                                     IntArrayRef stride, IntArrayRef padding,
                                     IntArrayRef dilation, int64_t groups) {
  constexpr std::string_view op = "conv2d";
  const Device device = support::common_device({&input, &weight, support::present(bias)});
  check_4d(op, "input", input);
  check_4d(op, "weight", weight);
  if (weight.size(2) < 1 || weight.size(3) < 1) {
    throw Error(fmt::format("conv2d: weight of shape {} has a {}x{} kernel; a kernel must be at "
                            "least 1x1",
                            detail::format_shape(weight.sizes()), weight.size(2), weight.size(3)));
  }
  check_floating(op, input);
  support::check_same_float_dtype(weight, input.dtype(), "conv2d: weight");
  check_pair(op, "stride", stride, 1);
  check_pair(op, "padding", padding, 0);
  check_pair(op, "dilation", dilation, 1);
  if (groups < 1) throw Error(fmt::format("conv2d: groups must be positive, got {}", groups));
  const int64_t out_channels = weight.size(0);
  if (input.size(1) != weight.size(1) * groups) {
    throw Error(fmt::format("conv2d: the input has {} channels, but weight of shape {} with "
                            "groups={} expects {} (weight.size(1) * groups)",
                            input.size(1), detail::format_shape(weight.sizes()), groups,
                            weight.size(1) * groups));
  }
  if (out_channels % groups != 0 || out_channels == 0) {
    throw Error(fmt::format("conv2d: weight's {} output channels must be a positive multiple of "
                            "groups={}",
                            out_channels, groups));
  }
  if (Tensor* b = support::present(bias)) {
    support::check_same_float_dtype(*b, input.dtype(), "conv2d: bias");
    if (b->dim() != 1 || b->size(0) != out_channels) {
      throw Error(fmt::format("conv2d: expected a bias of shape [{}] (one per output channel), "
                              "got shape {}",
                              out_channels, detail::format_shape(b->sizes())));
    }
  }
  const Window2d window{{weight.size(2), weight.size(3)},
                        plugin::expand_pair(stride, {1, 1}),
                        plugin::expand_pair(padding, {0, 0}),
                        plugin::expand_pair(dilation, {1, 1})};
  return {OutputSpec{windowed_shape(op, input, out_channels, window, false), input.dtype(),
                     device}};
}

// max_pool2d: a floating-point (N, C, H, W) self; padding at most half the kernel. out is
// (N, C, H_out, W_out) with self's dtype.
std::array<OutputSpec, 1> max_pool2d_out(Tensor& self, IntArrayRef kernel_size,
                                         IntArrayRef stride, IntArrayRef padding,
                                         IntArrayRef dilation, bool ceil_mode) {
  const Device device = support::common_device({&self});
  const Window2d window =
      checked_pooling_window("max_pool2d", self, kernel_size, stride, padding, dilation);
  return {OutputSpec{windowed_shape("max_pool2d", self, self.size(1), window, ceil_mode),
                     self.dtype(), device}};
}

// avg_pool2d: as max_pool2d without dilation; divisor_override, when given, is not zero.
std::array<OutputSpec, 1> avg_pool2d_out(Tensor& self, IntArrayRef kernel_size,
                                         IntArrayRef stride, IntArrayRef padding, bool ceil_mode,
                                         bool /*count_include_pad: both values are valid*/,
                                         std::optional<int64_t> divisor_override) {
  const Device device = support::common_device({&self});
  static constexpr int64_t kNoDilation = 1;
  const Window2d window =
      checked_pooling_window("avg_pool2d", self, kernel_size, stride, padding, kNoDilation);
  if (divisor_override && *divisor_override == 0) {
    throw Error("avg_pool2d: divisor_override must not be zero");
  }
  return {OutputSpec{windowed_shape("avg_pool2d", self, self.size(1), window, ceil_mode),
                     self.dtype(), device}};
}

// adaptive_avg_pool2d: a floating-point (N, C, H, W) self with H, W > 0; output_size is one or
// two positive ints. out is (N, C, output_size...).
std::array<OutputSpec, 1> adaptive_avg_pool2d_out(Tensor& self, IntArrayRef output_size) {
  constexpr std::string_view op = "adaptive_avg_pool2d";
  const Device device = support::common_device({&self});
  check_4d(op, "input", self);
  check_floating(op, self);
  check_pair(op, "output_size", output_size, 1);
  if (self.size(2) == 0 || self.size(3) == 0) {
    throw Error(fmt::format("{}: expected an input with non-zero height and width, got shape {}",
                            op, detail::format_shape(self.sizes())));
  }
  const plugin::Pair size = plugin::expand_pair(output_size, {1, 1});
  return {OutputSpec{DimVector{self.size(0), self.size(1), size[0], size[1]}, self.dtype(),
                     device}};
}

}  // namespace bp::meta
