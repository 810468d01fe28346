// max_pool2d, avg_pool2d and adaptive_avg_pool2d: one thread per output element, each walking its
// window of the input. Windows follow the CPU backend's arithmetic exactly: taps in the padding
// are skipped, an average divides by the window's padded size (count_include_pad) or by the taps
// it read, and adaptive windows are [floor(i * in / out), ceil((i + 1) * in / out)).
//
// Launched by pool.cu; a header so that the host tests compile these kernels too
// (tests/cuda/emulated_launch.h).
#pragma once

#include "kernels/device_support.cuh"

#include <limits>

namespace bp::cuda {
// Internal to each includer: the kernel library and the host tests each compile their own.
namespace {

constexpr int kPoolThreads = 256;

// The taps of one window along one dimension: `count` input indices from `first`, `step` apart,
// and what an average divides by.
struct Taps {
  int64_t first;
  int64_t count;
  int64_t step;
  int64_t divisor;
};

__device__ Taps window_taps(PoolKind kind, const SlidingWindow& w, int d, int64_t o,
                            int64_t in_size, int64_t out_size) {
  if (kind == PoolKind::AdaptiveAverage) {
    const int64_t start = o * in_size / out_size;
    const int64_t end = ((o + 1) * in_size + out_size - 1) / out_size;
    return {start, end - start, 1, end - start};
  }
  const int64_t step = w.dilation[d];
  const int64_t start = o * w.stride[d] - w.padding[d];
  // Taps before the input are skipped whole steps at a time.
  const int64_t skipped = start < 0 ? (-start + step - 1) / step : 0;
  const int64_t first = start + skipped * step;
  const int64_t last_tap = start + (w.kernel[d] - 1) * step;
  const int64_t last = last_tap < in_size - 1 ? last_tap : in_size - 1;
  const int64_t count = first > last ? 0 : (last - first) / step + 1;
  // The padded window: from start, at most to the end of the right padding.
  const int64_t padded_end =
      start + w.kernel[d] < in_size + w.padding[d] ? start + w.kernel[d] : in_size + w.padding[d];
  return {first, count, step, w.count_include_pad ? padded_end - start : count};
}

template <typename T>
__global__ void __launch_bounds__(kPoolThreads)
    pool2d(PoolKind kind, Image input, Image out, SlidingWindow window, int64_t total) {
  using C = compute_t<T>;
  const T* in = static_cast<const T*>(input.data);
  T* o = static_cast<T*>(out.data);
  const int64_t out_h = out.sizes[2], out_w = out.sizes[3], channels = out.sizes[1];
  for (int64_t i = global_thread(); i < total; i += grid_threads()) {
    const int64_t x = i % out_w;
    const int64_t y = i / out_w % out_h;
    const int64_t c = i / (out_w * out_h) % channels;
    const int64_t n = i / (out_w * out_h * channels);
    const Taps rows = window_taps(kind, window, 0, y, input.sizes[2], out_h);
    const Taps cols = window_taps(kind, window, 1, x, input.sizes[3], out_w);
    const T* plane = in + n * input.strides[0] + c * input.strides[1];
    C result;
    if (kind == PoolKind::Max) {
      result = -std::numeric_limits<C>::infinity();
      for (int64_t r = 0; r < rows.count; ++r) {
        const T* row = plane + (rows.first + r * rows.step) * input.strides[2];
        for (int64_t k = 0; k < cols.count; ++k) {
          const C v = to_compute(row[(cols.first + k * cols.step) * input.strides[3]]);
          if (is_nan(result)) break;
          if (is_nan(v) || result < v) result = v;
        }
      }
    } else {
      C sum = 0;
      for (int64_t r = 0; r < rows.count; ++r) {
        const T* row = plane + (rows.first + r * rows.step) * input.strides[2];
        for (int64_t k = 0; k < cols.count; ++k) {
          sum += to_compute(row[(cols.first + k * cols.step) * input.strides[3]]);
        }
      }
      const int64_t divisor =
          window.divisor_override != 0 ? window.divisor_override : rows.divisor * cols.divisor;
      result = sum / static_cast<C>(divisor);
    }
    o[n * out.strides[0] + c * out.strides[1] + y * out.strides[2] + x * out.strides[3]] =
        from_compute<T>(result);
  }
}

}  // namespace
}  // namespace bp::cuda
