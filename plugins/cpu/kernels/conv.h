// conv2d's sizes, and its two ways, forward and backward: through oneDNN for float32, float16
// and bfloat16 (conv_onednn.cpp), and with the plugin's own loops for the dtype oneDNN has no
// convolution for, float64 (conv_loops.cpp).
#pragma once

#include "kernels/strided_loop.h"

#include <backplane/sdk/window2d.hpp>

#include <cstdint>

namespace bp::cpu {

struct ConvGeometry {
  int64_t batch, in_channels, height, width;
  int64_t out_channels, out_height, out_width;
  int64_t groups;
  plugin::Window2d window;  // the kernel's size, stride, padding and dilation
};

// out = conv2d(input, weight) + bias for float64 views of any strides.
void conv2d_loops(const ConvGeometry& g, const TensorView& input, const TensorView& weight,
                  const TensorView* bias, const TensorView& out);

// out = conv2d(input, weight) + bias through oneDNN, for float32, float16 and bfloat16 views of
// any strides: every image at once when this CPU's oneDNN computes in their dtype, else one
// image at a time converted to and from float32. Refuses, by name, sizes and windows beyond
// what an int holds, which oneDNN does not take.
void conv2d_onednn(ConvGeometry g, const TensorView& input, const TensorView& weight,
                   const TensorView* bias, const TensorView& out);

// The gradients of conv2d's input, weight and bias (grad_output summed over N, H, W), for views
// of any floating dtype and strides, computed in its compute type.
void convolution_backward_loops(const ConvGeometry& g, const TensorView& grad_output,
                                const TensorView& input, const TensorView& weight,
                                const TensorView& grad_input, const TensorView& grad_weight,
                                const TensorView& grad_bias);

// The same through oneDNN's backward convolution in float32 (other dtypes converted), for a
// non-empty batch and input channels. Refuses, by name, what conv2d_onednn refuses.
void convolution_backward_onednn(ConvGeometry g, const TensorView& grad_output,
                                 const TensorView& input, const TensorView& weight,
                                 const TensorView& grad_input, const TensorView& grad_weight,
                                 const TensorView& grad_bias);

}  // namespace bp::cpu
