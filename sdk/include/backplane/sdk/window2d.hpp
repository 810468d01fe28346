// The sliding window of conv2d and the 2-D pooling ops, shared by the core's meta step and every
// backend's kernels so that all of them read the int[2] arguments, size outputs and place
// pooling windows the same way.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <span>
#include <vector>

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

// Output size of dim `d` for an input of `input_size` elements, as PyTorch sizes it: the windows
// that fit in the padded input, and with ceil_mode a last one that runs past its end (even where
// no whole window fits), unless it would start in the right padding.
inline int64_t window_output_size(const Window2d& w, int d, int64_t input_size,
                                  bool ceil_mode = false) {
  const int64_t room =
      input_size + 2 * w.padding[d] - w.span(d) + (ceil_mode ? w.stride[d] - 1 : 0);
  if (room < 0) return 0;
  int64_t size = room / w.stride[d] + 1;
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

// The pooling windows along one spatial dim, as tables a kernel reads: output index o reads
// count[o] input elements, the first at first[o] and then every `step`; divisor[o] is what an
// average divides their sum by along this dim (the product over both dims is the divisor).
// Taps in the padding are skipped, never read.
struct PoolAxis {
  std::vector<int64_t> first, count, divisor;
  int64_t step = 1;
};

// The windows of `window` along dim `d` over `in_size` inputs, for `out_size` outputs. Averages
// divide by the padded window's extent within the padded input when `include_padding`
// (count_include_pad), else by the elements inside the input.
inline PoolAxis pooling_axis(const Window2d& window, int d, int64_t in_size, int64_t out_size,
                             bool include_padding) {
  PoolAxis axis;
  axis.step = window.dilation[d];
  const int64_t padding = window.padding[d];
  for (int64_t o = 0; o < out_size; ++o) {
    const int64_t start = o * window.stride[d] - padding;
    // Taps before the input are skipped whole steps at a time.
    const int64_t skipped = start < 0 ? (-start + axis.step - 1) / axis.step : 0;
    const int64_t first = start + skipped * axis.step;
    const int64_t last_tap = start + (window.kernel[d] - 1) * axis.step;
    const int64_t last = std::min(last_tap, in_size - 1);
    const int64_t count = first > last ? 0 : (last - first) / axis.step + 1;
    axis.first.push_back(first);
    axis.count.push_back(count);
    // The padded window: from start, at most to the end of the right padding.
    axis.divisor.push_back(
        include_padding ? std::min(start + window.kernel[d], in_size + padding) - start : count);
  }
  return axis;
}

// adaptive_avg_pool2d's windows: [floor(o * in / out), ceil((o + 1) * in / out)).
inline PoolAxis adaptive_axis(int64_t in_size, int64_t out_size) {
  PoolAxis axis;
  for (int64_t o = 0; o < out_size; ++o) {
    const int64_t start = adaptive_window_start(o, in_size, out_size);
    const int64_t end = adaptive_window_end(o, in_size, out_size);
    axis.first.push_back(start);
    axis.count.push_back(end - start);
    axis.divisor.push_back(end - start);
  }
  return axis;
}

}  // namespace bp::plugin
