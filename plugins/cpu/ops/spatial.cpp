// The spatial ops: conv2d, max_pool2d, avg_pool2d and adaptive_avg_pool2d and their backward
// ops, and which of their two ways each call takes (conv.h, pooling_loops.h,
// pooling_onednn.h, pooling_backward_loops.h). conv2d runs through
// oneDNN for float32 and the 16-bit floats and on the plugin's loops for float64. Max pooling
// runs on the plugin's own loops for every dtype and window: oneDNN pools NCHW arrays with
// scalar code and differs from PyTorch on NaN and on windows of -inf. oneDNN's pooling runs the
// averages it can express exactly: averages that exclude the padding, averages that include it
// when no window runs past the padding, and adaptive pooling whose windows tile the input
// evenly, where every size, kernel size, stride and padding fits in an int; the other averages,
// and float64, run on the loops. convolution_backward runs through oneDNN in float32 (16-bit
// floats converted) and on the loops for float64; max_pool2d_with_indices and the pooling
// backward ops run on the loops.
#include "CPUNativeFunctions.h"

#include "kernels/conv.h"
#include "kernels/copy_elements.h"
#include "kernels/pooling_backward_loops.h"
#include "kernels/pooling_loops.h"
#include "kernels/pooling_onednn.h"
#include "kernels/strided_loop.h"

#include <backplane/sdk/window2d.hpp>

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <type_traits>

namespace bp::cpu {
namespace {

// Without input channels there is nothing to sum: every output is its channel's bias, or zero.
// (oneDNN refuses such a convolution.)
void conv_over_no_channels(const TensorView* bias, const TensorView& out) {
  double zero = 0;
  const int64_t bias_strides[] = {0, bias ? bias->stride(0) : 0, 0, 0};
  const StridedElements source =
      bias ? StridedElements{bias->data<void>(), bias->dtype(), bias_strides}
           : StridedElements{&zero, DType::Float64, bias_strides};
  copy_elements(out.sizes(), elements_of(out), source);
}

}  // namespace

void conv2d_out(const TensorView& input, const TensorView& weight, const TensorView* bias,
                std::span<const int64_t> stride, std::span<const int64_t> padding,
                std::span<const int64_t> dilation, int64_t groups, const TensorView& out) {
  require_dtype("conv2d", "weight", weight, input.dtype());
  require_dtype("conv2d", "out", out, input.dtype());
  if (bias) require_dtype("conv2d", "bias", *bias, input.dtype());
  if (out.numel() == 0) return;
  const ConvGeometry g{input.size(0),
                       input.size(1),
                       input.size(2),
                       input.size(3),
                       out.size(1),
                       out.size(2),
                       out.size(3),
                       groups,
                       {{weight.size(2), weight.size(3)},
                        plugin::expand_pair(stride, {1, 1}),
                        plugin::expand_pair(padding, {0, 0}),
                        plugin::expand_pair(dilation, {1, 1})}};
  if (g.in_channels == 0) return conv_over_no_channels(bias, out);
  plugin::visit_dtype<kernel_dtypes::conv2d_out>(out.dtype(), [&](auto tag) {
    if constexpr (std::is_same_v<typename decltype(tag)::type, double>) {
      conv2d_loops(g, input, weight, bias, out);
    } else {
      conv2d_onednn(g, input, weight, bias, out);
    }
  });
}

void max_pool2d_out(const TensorView& self, std::span<const int64_t> kernel_size,
                    std::span<const int64_t> stride, std::span<const int64_t> padding,
                    std::span<const int64_t> dilation, bool ceil_mode, const TensorView& out) {
  (void)ceil_mode;  // out's size says whether the meta step added a window
  require_dtype("max_pool2d", "out", out, self.dtype());
  if (out.numel() == 0) return;
  const Window2d w = plugin::pooling_window(kernel_size, stride, padding, dilation);
  plugin::visit_dtype<kernel_dtypes::max_pool2d_out>(
      out.dtype(), [&](auto tag) { max_pool2d_loops<typename decltype(tag)::type>(self, out, w); });
}

void avg_pool2d_out(const TensorView& self, std::span<const int64_t> kernel_size,
                    std::span<const int64_t> stride, std::span<const int64_t> padding,
                    bool ceil_mode, bool count_include_pad, std::optional<int64_t> divisor_override,
                    const TensorView& out) {
  (void)ceil_mode;  // out's size says whether the meta step added a window
  require_dtype("avg_pool2d", "out", out, self.dtype());
  if (out.numel() == 0) return;
  const Window2d w = plugin::pooling_window(kernel_size, stride, padding, {});
  plugin::visit_dtype<kernel_dtypes::avg_pool2d_out>(out.dtype(), [&](auto tag) {
    const std::optional<DType> pooled = onednn_pooling_dtype(out.dtype());
    if (pooled && !divisor_override && onednn_pooling_takes(w, self, out)) {
      if (!count_include_pad) {
        return onednn_average_pool(w, self, out, *pooled, /*include_padding=*/false);
      }
      if (windows_stay_in_padding(w, self, out)) {
        return onednn_average_pool(w, self, out, *pooled, /*include_padding=*/true);
      }
    }
    average_pool2d_loops<typename decltype(tag)::type>(
        self, out, plugin::pooling_axis(w, 0, self.size(2), out.size(2), count_include_pad),
        plugin::pooling_axis(w, 1, self.size(3), out.size(3), count_include_pad), divisor_override);
  });
}

// Windows that tile the input evenly are an average pooling with kernel = stride = in / out.
void adaptive_avg_pool2d_out(const TensorView& self, std::span<const int64_t> output_size,
                             const TensorView& out) {
  (void)output_size;  // out's size is output_size, expanded by the meta step
  require_dtype("adaptive_avg_pool2d", "out", out, self.dtype());
  if (out.numel() == 0) return;
  const int64_t height = self.size(2), width = self.size(3);
  const int64_t out_height = out.size(2), out_width = out.size(3);
  plugin::visit_dtype<kernel_dtypes::adaptive_avg_pool2d_out>(out.dtype(), [&](auto tag) {
    const std::optional<DType> pooled = onednn_pooling_dtype(out.dtype());
    if (pooled && height % out_height == 0 && width % out_width == 0) {
      const Window2d tiles{{height / out_height, width / out_width},
                           {height / out_height, width / out_width},
                           {0, 0},
                           {1, 1}};
      if (onednn_pooling_takes(tiles, self, out)) {
        return onednn_average_pool(tiles, self, out, *pooled, /*include_padding=*/false);
      }
    }
    average_pool2d_loops<typename decltype(tag)::type>(
        self, out, plugin::adaptive_axis(height, out_height),
        plugin::adaptive_axis(width, out_width), std::nullopt);
  });
}

void convolution_backward_out(const TensorView& grad_output, const TensorView& input,
                              const TensorView& weight, std::span<const int64_t> stride,
                              std::span<const int64_t> padding, std::span<const int64_t> dilation,
                              int64_t groups, const TensorView& grad_input,
                              const TensorView& grad_weight, const TensorView& grad_bias) {
  plugin::require_dtypes("convolution_backward",
                         {{"input", &input},
                          {"weight", &weight},
                          {"grad_input", &grad_input},
                          {"grad_weight", &grad_weight},
                          {"grad_bias", &grad_bias}},
                         grad_output.dtype());
  const ConvGeometry g{input.size(0),
                       input.size(1),
                       input.size(2),
                       input.size(3),
                       grad_output.size(1),
                       grad_output.size(2),
                       grad_output.size(3),
                       groups,
                       {{weight.size(2), weight.size(3)},
                        plugin::expand_pair(stride, {1, 1}),
                        plugin::expand_pair(padding, {0, 0}),
                        plugin::expand_pair(dilation, {1, 1})}};
  // oneDNN refuses empty batches and channels; the loops sum over nothing.
  if (grad_output.dtype() == DType::Float64 || g.batch == 0 || g.in_channels == 0) {
    return convolution_backward_loops(g, grad_output, input, weight, grad_input, grad_weight,
                                      grad_bias);
  }
  convolution_backward_onednn(g, grad_output, input, weight, grad_input, grad_weight, grad_bias);
}

void max_pool2d_with_indices_out(const TensorView& self, std::span<const int64_t> kernel_size,
                                 std::span<const int64_t> stride, std::span<const int64_t> padding,
                                 std::span<const int64_t> dilation, bool ceil_mode,
                                 const TensorView& out, const TensorView& indices) {
  (void)ceil_mode;  // out's size says whether the meta step added a window
  require_dtype("max_pool2d_with_indices", "out", out, self.dtype());
  require_dtype("max_pool2d_with_indices", "indices", indices, DType::Int64);
  if (out.numel() == 0) return;
  const Window2d w = plugin::pooling_window(kernel_size, stride, padding, dilation);
  plugin::visit_dtype<kernel_dtypes::max_pool2d_with_indices_out>(out.dtype(), [&](auto tag) {
    max_pool2d_with_indices_loops<typename decltype(tag)::type>(self, out, indices, w);
  });
}

void max_pool2d_with_indices_backward_grad_input(
    const TensorView& grad_output, const TensorView& self, std::span<const int64_t> kernel_size,
    std::span<const int64_t> stride, std::span<const int64_t> padding,
    std::span<const int64_t> dilation, bool ceil_mode, const TensorView& indices,
    const TensorView& grad_input) {
  // The indices say where each gradient goes; the window only shaped them.
  (void)kernel_size, (void)stride, (void)padding, (void)dilation, (void)ceil_mode;
  constexpr std::string_view op = "max_pool2d_with_indices_backward";
  require_dtype(op, "self", self, grad_output.dtype());
  require_dtype(op, "grad_input", grad_input, grad_output.dtype());
  require_dtype(op, "indices", indices, DType::Int64);
  if (grad_input.numel() == 0) return;
  plugin::visit_dtype<kernel_dtypes::max_pool2d_with_indices_backward_grad_input>(
      grad_input.dtype(), [&](auto tag) {
        max_pool2d_backward_loops<typename decltype(tag)::type>(grad_output, indices, grad_input);
      });
}

void avg_pool2d_backward_grad_input(const TensorView& grad_output, const TensorView& self,
                                    std::span<const int64_t> kernel_size,
                                    std::span<const int64_t> stride,
                                    std::span<const int64_t> padding, bool ceil_mode,
                                    bool count_include_pad, std::optional<int64_t> divisor_override,
                                    const TensorView& grad_input) {
  (void)ceil_mode;  // grad_output's size says whether the meta step added a window
  require_dtype("avg_pool2d_backward", "self", self, grad_output.dtype());
  require_dtype("avg_pool2d_backward", "grad_input", grad_input, grad_output.dtype());
  if (grad_input.numel() == 0) return;
  const Window2d w = plugin::pooling_window(kernel_size, stride, padding, {});
  plugin::visit_dtype<kernel_dtypes::avg_pool2d_backward_grad_input>(
      grad_input.dtype(), [&](auto tag) {
        average_pool2d_backward_loops<typename decltype(tag)::type>(
            grad_output, grad_input,
            plugin::pooling_axis(w, 0, self.size(2), grad_output.size(2), count_include_pad),
            plugin::pooling_axis(w, 1, self.size(3), grad_output.size(3), count_include_pad),
            divisor_override);
      });
}

void _adaptive_avg_pool2d_backward_out(const TensorView& grad_output, const TensorView& self,
                                       const TensorView& out) {
  require_dtype("_adaptive_avg_pool2d_backward", "self", self, grad_output.dtype());
  require_dtype("_adaptive_avg_pool2d_backward", "out", out, grad_output.dtype());
  if (out.numel() == 0) return;
  plugin::visit_dtype<kernel_dtypes::_adaptive_avg_pool2d_backward_out>(out.dtype(), [&](auto tag) {
    average_pool2d_backward_loops<typename decltype(tag)::type>(
        grad_output, out, plugin::adaptive_axis(self.size(2), grad_output.size(2)),
        plugin::adaptive_axis(self.size(3), grad_output.size(3)), std::nullopt);
  });
}

}  // namespace bp::cpu
