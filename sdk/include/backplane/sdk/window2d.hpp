// The sliding window of conv2d and the 2-D pooling ops, shared by the core's meta step and every
// backend's kernels so that all of them read the int[2] arguments and size outputs the same way.
#pragma once

#include <array>
#include <cstdint>
#include <span>

namespace bp::plugin {

// One value per spatial dimension: [0] is the height, [1] the width.
using Pair = std::array<int64_t, 2>;

// PyTorch's int[2] shorthand: one value stands for both dims. An empty list gives `fallback`
// (pooling's stride=[] means the kernel size). The meta step has refused any other length.
inline Pair expand_pair(std::span<const int64_t> values, Pair fallback) {
  if (values.empty()) return fallback;
  if (values.size() == 1) return {values[0], values[0]};
  return {values[0], values[1]};
}

struct Window2d {
  Pair kernel;
  Pair stride;
  Pair padding;   // on both sides of each dim
  Pair dilation;  // 1 for avg pooling

  // The extent one window covers in dim `d` of the (unpadded) input, holes included.
  int64_t span(int d) const { return dilation[d] * (kernel[d] - 1) + 1; }
};

// The window of a 2-D pooling op from its schema arguments.
inline Window2d pooling_window(std::span<const int64_t> kernel_size, std::span<const int64_t> stride,
                               std::span<const int64_t> padding,
                               std::span<const int64_t> dilation) {
  const Pair kernel = expand_pair(kernel_size, {1, 1});
  return {kernel, expand_pair(stride, kernel), expand_pair(padding, {0, 0}),
          expand_pair(dilation, {1, 1})};
}

// Output size of dim `d` for an input of `input_size` elements. With ceil_mode, a last window
// that would start in the right padding is dropped, as in PyTorch.
inline int64_t window_output_size(const Window2d& w, int d, int64_t input_size,
                                  bool ceil_mode = false) {
  const int64_t room = input_size + 2 * w.padding[d] - w.span(d);
  if (room < 0) return 0;
  int64_t size = (ceil_mode ? (room + w.stride[d] - 1) / w.stride[d] : room / w.stride[d]) + 1;
  if (ceil_mode && (size - 1) * w.stride[d] >= input_size + w.padding[d]) --size;
  return size;
}

// Adaptive pooling's window for output index `i` of `output_size` over `input_size` elements:
// [start, end), the windows covering the input with overlaps as even as integers allow.
inline int64_t adaptive_window_start(int64_t i, int64_t input_size, int64_t output_size) {
  return i * input_size / output_size;
}
inline int64_t adaptive_window_end(int64_t i, int64_t input_size, int64_t output_size) {
  return ((i + 1) * input_size + output_size - 1) / output_size;
}

}  // namespace bp::plugin
