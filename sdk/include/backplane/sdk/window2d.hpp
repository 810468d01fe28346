// The sliding window of conv2d and the 2-D pooling ops, shared by the core's meta step and every
// backend's kernels so that all of them read the int[2] arguments, size outputs and place
// pooling windows the same way.
//
// The meta step sizes outputs with checked_window_output_size and refuses any window whose
// arithmetic leaves int64_t (and adaptive sizes for which adaptive_arithmetic_fits is false).
// Past it, every position a kernel computes, o * stride - padding + tap * dilation for an output
// index o and a tap below the kernel size, lies between -padding and the end of the last window,
// which fits; so the rest of this file, and kernels that compute as it does, need no checks.
#pragma once

#include <backplane/sdk/checked_arithmetic.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
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
inline Window2d pooling_window(std::span<const int64_t> kernel_size,
                               std::span<const int64_t> stride, std::span<const int64_t> padding,
                               std::span<const int64_t> dilation) {
  const Pair kernel = expand_pair(kernel_size, {1, 1});
  return {kernel, expand_pair(stride, kernel), expand_pair(padding, {0, 0}),
          expand_pair(dilation, {1, 1})};
}

// Which of a window's quantities along one dim does not fit in int64_t, for the meta step to
// name the arguments it comes from.
enum class WindowOverflow {
  None,
  Span,         // dilation * (kernel - 1) + 1, the extent of one window
  PaddedInput,  // input_size + 2 * padding
  LastWindow,   // (output_size - 1) * stride + span, where the last window ends (ceil_mode)
};

struct WindowOutputSize {
  int64_t size = 0;  // when overflow is None
  WindowOverflow overflow = WindowOverflow::None;
};

// Output size of dim `d` for an input of `input_size` elements, as PyTorch sizes it: the windows
// that fit in the padded input, and with ceil_mode a last one that runs past its end (even where
// no whole window fits), unless it would start in the right padding. Each step is checked: where
// one overflows, `overflow` says which. Takes the arguments the meta step has checked: a
// non-negative input size and padding, and a positive kernel size, stride and dilation.
inline WindowOutputSize checked_window_output_size(const Window2d& w, int d, int64_t input_size,
                                                   bool ceil_mode = false) {
  const std::optional<int64_t> holes_and_taps = checked_mul(w.dilation[d], w.kernel[d] - 1);
  const std::optional<int64_t> span =
      holes_and_taps ? checked_add(*holes_and_taps, int64_t{1}) : std::nullopt;
  if (!span) return {0, WindowOverflow::Span};
  const std::optional<int64_t> both_paddings = checked_mul(w.padding[d], int64_t{2});
  const std::optional<int64_t> padded =
      both_paddings ? checked_add(input_size, *both_paddings) : std::nullopt;
  if (!padded) return {0, WindowOverflow::PaddedInput};
  // Where the last window may start; it cannot overflow, as padded >= 0 and span >= 1.
  const int64_t room = *padded - *span;
  const int64_t stride = w.stride[d];
  // The windows after the first: room / stride rounded down, or up with ceil_mode. Rounding
  // from the truncated quotient by its remainder never computes room + stride - 1, which may
  // overflow.
  int64_t later = room / stride;
  const int64_t remainder = room % stride;
  if (ceil_mode && remainder > 0) ++later;
  if (!ceil_mode && remainder < 0) --later;
  if (later < 0) return {0, WindowOverflow::None};
  int64_t size = later + 1;  // later <= room < INT64_MAX
  if (ceil_mode) {
    // A product past int64_t starts past input_size + padding, which fits.
    const std::optional<int64_t> last_start = checked_mul(size - 1, stride);
    if (!last_start || *last_start >= input_size + w.padding[d]) --size;
  }
  if (size == 0) return {0, WindowOverflow::None};
  // Without ceil_mode the last window ends inside the padded input; with it, maybe beyond.
  const std::optional<int64_t> last_start = checked_mul(size - 1, stride);
  if (!last_start || !checked_add(*last_start, *span)) return {0, WindowOverflow::LastWindow};
  return {size, WindowOverflow::None};
}

// Adaptive pooling's window for output index `i` of `output_size` over `input_size` elements:
// [start, end), the windows covering the input with overlaps as even as integers allow. The
// meta step has checked adaptive_arithmetic_fits for both sizes.
inline int64_t adaptive_window_start(int64_t i, int64_t input_size, int64_t output_size) {
  return i * input_size / output_size;
}
inline int64_t adaptive_window_end(int64_t i, int64_t input_size, int64_t output_size) {
  return ((i + 1) * input_size + output_size - 1) / output_size;
}

// Whether the window bounds above fit in int64_t for every output index: the largest value
// they compute is output_size * input_size + output_size - 1.
inline bool adaptive_arithmetic_fits(int64_t input_size, int64_t output_size) {
  const std::optional<int64_t> product = checked_mul(output_size, input_size);
  return product && checked_add(*product, output_size - 1);
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

// The windows of a PoolAxis seen from the input, for gradients gathered per input element: input
// index i lies in no window but those of count[i] consecutive outputs from first[i]. The range may
// hold more: a dilated window that steps over i between two taps, or one whose taps the padding
// shifts; kernels check each output (an average whether its window takes i, a maximum whether its
// index is i).
struct CoveringWindows {
  std::vector<int64_t> first, count;
};

inline CoveringWindows covering_windows(const PoolAxis& axis, int64_t in_size) {
  const auto out_size = static_cast<int64_t>(axis.first.size());
  // Each window's reach, from its first to its last tap, widened so that neither end decreases
  // with the output index: the earliest first tap of the windows from o on, the latest last tap
  // of those up to o.
  std::vector<int64_t> low(axis.first.size()), high(axis.first.size());
  int64_t latest = -1;
  for (int64_t o = 0; o < out_size; ++o) {
    const auto k = static_cast<size_t>(o);
    if (axis.count[k] > 0) {
      latest = std::max(latest, axis.first[k] + (axis.count[k] - 1) * axis.step);
    }
    high[k] = latest;
  }
  int64_t earliest = in_size;
  for (int64_t o = out_size - 1; o >= 0; --o) {
    const auto k = static_cast<size_t>(o);
    if (axis.count[k] > 0) earliest = std::min(earliest, axis.first[k]);
    low[k] = earliest;
  }
  CoveringWindows covering;
  int64_t begin = 0, end = 0;  // the outputs whose reach holds i: [begin, end)
  for (int64_t i = 0; i < in_size; ++i) {
    while (end < out_size && low[static_cast<size_t>(end)] <= i) ++end;
    while (begin < end && high[static_cast<size_t>(begin)] < i) ++begin;
    covering.first.push_back(begin);
    covering.count.push_back(end - begin);
  }
  return covering;
}

}  // namespace bp::plugin
