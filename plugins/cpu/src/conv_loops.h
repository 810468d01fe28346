// conv2d's sizes, and the plugin's own convolution loops for the dtype oneDNN has no
// convolution for (float64).
#pragma once

#include "strided_loop.h"

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

}  // namespace bp::cpu
