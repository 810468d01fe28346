// The plugin's own 2-D pooling loops: every floating dtype and every rule PyTorch has for which
// elements a window reads and what an average divides by, including the ones oneDNN cannot
// express (divisor_override, adaptive windows that overlap, averages whose padded window runs
// past the padding in ceil_mode) and NaN propagation in max pooling. Max pooling of a plane runs
// separably, as vector loops along rows, where that pays; every other pooling one window at a
// time over its taps inside the input. Planes are split across the thread pool.
#pragma once

#include "kernels/multiversion.h"
#include "kernels/nan_propagation.h"
#include "kernels/row_conversion.h"
#include "runtime/thread_pool.h"

#include <backplane/sdk/checked_arithmetic.hpp>
#include <backplane/sdk/window2d.hpp>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <vector>

namespace bp::cpu {

using plugin::PoolAxis;
using plugin::Window2d;

namespace pooling_detail {

// Less work than this (elements read) runs on the calling thread alone.
inline constexpr int64_t kMinParallelWork = int64_t{1} << 15;

// The grain for parallel_for over input's planes.
inline int64_t grain_for_planes(const TensorView& input) {
  const int64_t plane = std::max<int64_t>(1, input.size(2) * input.size(3));
  return std::max<int64_t>(1, kMinParallelWork / plane);
}

// What max pooling of one plane holds in its compute type C, one output row at a time: an input
// row (where it is not C and contiguous already); the maxima down the output row's window, at
// index padding + x for input column x and -inf in the padding on either side, which covers
// every window; the maxima across each run of taps starting at every index; and the output row
// (where it is not C and contiguous).
template <typename C>
struct MaxPoolRows {
  int64_t width;   // the input's
  int64_t padded;  // -inf before the input's columns, and after them up to the last window's tap
  std::vector<C> input, down, across, output;

  MaxPoolRows(const Window2d& w, int64_t width, int64_t out_width)
      : width(width),
        padded(std::max(w.padding[1] + width, (out_width - 1) * w.stride[1] + w.span(1))),
        input(static_cast<size_t>(width)),
        down(static_cast<size_t>(padded), -std::numeric_limits<C>::infinity()),
        across(static_cast<size_t>(padded)),
        output(static_cast<size_t>(out_width)) {}
};

// out's plane (n, c) of max pooling, separably, each step a loop along a row of consecutive
// elements (vector code without branches): for each output row, the maxima down its window's
// input rows, then across each window's taps of those, then every stride-th of them.
template <typename T>
BP_CPU_MULTIVERSIONED void max_pool_plane(const TensorView& input, const TensorView& out, int64_t n,
                                          int64_t c, const Window2d& w, const PoolAxis& rows,
                                          MaxPoolRows<compute_t<T>>& buffers) {
  using C = compute_t<T>;
  const T* in_plane = input.data<const T>() + n * input.stride(0) + c * input.stride(1);
  T* out_plane = out.data<T>() + n * out.stride(0) + c * out.stride(1);
  C* down = buffers.down.data() + w.padding[1];
  C* across = buffers.across.data();
  const int64_t width = buffers.width;
  const int64_t starts = (out.size(3) - 1) * w.stride[1] + 1;  // indices where windows start
  for (int64_t y = 0; y < out.size(2); ++y) {
    std::fill_n(down, width, -std::numeric_limits<C>::infinity());
    for (int64_t i = 0; i < rows.count[y]; ++i) {
      const C* row =
          row_in_compute_type(in_plane + (rows.first[y] + i * rows.step) * input.stride(2), width,
                              input.stride(3), buffers.input.data());
      for (int64_t x = 0; x < width; ++x) down[x] = max_keeping_nan(down[x], row[x]);
    }
    const C* padded = buffers.down.data();
    std::copy_n(padded, starts, across);
    for (int64_t tap = 1; tap < w.kernel[1]; ++tap) {
      const C* shifted = padded + tap * w.dilation[1];
      for (int64_t x = 0; x < starts; ++x) across[x] = max_keeping_nan(across[x], shifted[x]);
    }
    store_row(out_plane + y * out.stride(2), 0, out.size(3), out.stride(3), buffers.output.data(),
              [&](int64_t x) { return across[x * w.stride[1]]; });
  }
}

// out's plane (n, c) with each output element (y, x) set to value(fold, y, x), where
// fold(init, op) folds op over the taps of its window (rows[y], cols[x]) of input's plane, in
// the compute type: a loop over the taps inside the input alone, whatever the window's size.
template <typename T, typename Value>
void pool_plane_by_windows(const TensorView& input, const TensorView& out, int64_t n, int64_t c,
                           const PoolAxis& rows, const PoolAxis& cols, Value value) {
  using C = compute_t<T>;
  const int64_t y_step = rows.step * input.stride(2), x_step = cols.step * input.stride(3);
  const T* in_plane = input.data<const T>() + n * input.stride(0) + c * input.stride(1);
  T* out_plane = out.data<T>() + n * out.stride(0) + c * out.stride(1);
  for (int64_t y = 0; y < out.size(2); ++y) {
    for (int64_t x = 0; x < out.size(3); ++x) {
      const T* window =
          in_plane + rows.first[y] * input.stride(2) + cols.first[x] * input.stride(3);
      const auto fold = [&](C init, auto op) {
        for (int64_t i = 0; i < rows.count[y]; ++i) {
          for (int64_t j = 0; j < cols.count[x]; ++j) {
            init = op(init, static_cast<C>(window[i * y_step + j * x_step]));
          }
        }
        return init;
      };
      out_plane[y * out.stride(2) + x * out.stride(3)] = static_cast<T>(value(fold, y, x));
    }
  }
}

// Whether max pooling along the width runs on the separable loops. They fill a row as long as
// the padded input and take every tap at every index a window may start at; the loops over
// each window's taps read only the taps inside the input. The separable loops run as vector
// code and the others a tap at a time, so the separable ones run unless they would do more
// than four times the others' work: a kernel or padding far wider than the input (as wide as
// int64 allows) takes the other loops, with no row of its width to fill. So do rows shorter
// than one vector of float32 (the 4 x 4 planes of a small CNN), where the separable loops'
// work per output row costs more than the few taps (bench/README.md, bench_training).
inline constexpr int64_t kMinSeparableMaxPoolWidth = 8;

inline bool separable_max_pooling_pays(const Window2d& w, const PoolAxis& cols, int64_t width) {
  if (width < kMinSeparableMaxPoolWidth) return false;
  const int64_t out_width = static_cast<int64_t>(cols.count.size());
  int64_t taps_in_input = 0;  // up to out_width * width, which may leave int64 for a wide input
  for (int64_t count : cols.count) {
    taps_in_input =
        plugin::checked_add(taps_in_input, count).value_or(std::numeric_limits<int64_t>::max());
  }
  // The meta step has checked that the last window's end fits.
  const int64_t padded = std::max(w.padding[1] + width, (out_width - 1) * w.stride[1] + w.span(1));
  const int64_t starts = (out_width - 1) * w.stride[1] + 1;
  const std::optional<int64_t> across = plugin::checked_mul(w.kernel[1], starts);
  const std::optional<int64_t> work = across ? plugin::checked_add(padded, *across) : std::nullopt;
  constexpr int64_t kVectorAdvantage = 4;
  return work && *work / kVectorAdvantage - width <= taps_in_input;
}

}  // namespace pooling_detail

// out[n, c, y, x] = the max of input's window (y, x) under `window` (padding never wins; NaN
// does), for (N, C, H, W) views of T of any strides.
template <typename T>
void max_pool2d_loops(const TensorView& input, const TensorView& out, const Window2d& window) {
  using C = compute_t<T>;
  const int64_t channels = out.size(1);
  const PoolAxis rows = plugin::pooling_axis(window, 0, input.size(2), out.size(2), false);
  const PoolAxis cols = plugin::pooling_axis(window, 1, input.size(3), out.size(3), false);
  const bool separable = pooling_detail::separable_max_pooling_pays(window, cols, input.size(3));
  const int64_t grain = pooling_detail::grain_for_planes(input);
  parallel_for(out.size(0) * channels, grain, [&](int64_t begin, int64_t end) {
    if (!separable) {
      const auto maximum = [](auto fold, int64_t, int64_t) {
        return fold(-std::numeric_limits<C>::infinity(), max_keeping_nan<C>);
      };
      for (int64_t plane = begin; plane < end; ++plane) {
        pooling_detail::pool_plane_by_windows<T>(input, out, plane / channels, plane % channels,
                                                 rows, cols, maximum);
      }
      return;
    }
    pooling_detail::MaxPoolRows<C> buffers(window, input.size(3), out.size(3));
    for (int64_t plane = begin; plane < end; ++plane) {
      pooling_detail::max_pool_plane<T>(input, out, plane / channels, plane % channels, window,
                                        rows, buffers);
    }
  });
}

// out[n, c, y, x] = the sum of input's window (rows, cols) divided by rows.divisor[y] *
// cols.divisor[x] (or by `divisor_override`), for (N, C, H, W) views of T of any strides.
template <typename T>
void average_pool2d_loops(const TensorView& input, const TensorView& out, const PoolAxis& rows,
                          const PoolAxis& cols, std::optional<int64_t> divisor_override) {
  using C = compute_t<T>;
  const int64_t channels = out.size(1);
  const int64_t grain = pooling_detail::grain_for_planes(input);
  parallel_for(out.size(0) * channels, grain, [&](int64_t begin, int64_t end) {
    const auto average = [&](auto fold, int64_t y, int64_t x) {
      const int64_t divisor =
          divisor_override ? *divisor_override : rows.divisor[y] * cols.divisor[x];
      return fold(C{0}, std::plus<C>{}) / static_cast<C>(divisor);
    };
    for (int64_t plane = begin; plane < end; ++plane) {
      pooling_detail::pool_plane_by_windows<T>(input, out, plane / channels, plane % channels, rows,
                                               cols, average);
    }
  });
}

}  // namespace bp::cpu
