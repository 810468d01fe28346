// max_pool2d (with or without indices), avg_pool2d and adaptive_avg_pool2d: one thread per
// output element, each walking its window of the input; and their gradients: one thread per
// input element, each gathering from the outputs whose windows hold it (no atomics). Windows
// follow the CPU backend's arithmetic exactly: taps in the padding are skipped, an average
// divides by the window's padded size (count_include_pad) or by the taps it read, and adaptive
// windows are [floor(i * in / out), ceil((i + 1) * in / out)).
//
// Launched by pool.cu; a header so that the host tests compile these kernels too
// (tests/cuda/emulated_launch.h).
#pragma once

#include "kernels/device_support.cuh"
#include "kernels/gather.cuh"

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

// `indices` (data null where none): Max's positions in each input plane.
template <typename T>
__global__ void __launch_bounds__(kPoolThreads)
    pool2d(PoolKind kind, Image input, Image out, SlidingWindow window, int64_t total,
           Image indices = Image{}) {
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
      // A window of -inf alone has its first tap as the maximum, as in PyTorch.
      int64_t position = rows.first * input.sizes[3] + cols.first;
      for (int64_t r = 0; r < rows.count; ++r) {
        const int64_t y = rows.first + r * rows.step;
        const T* row = plane + y * input.strides[2];
        for (int64_t k = 0; k < cols.count; ++k) {
          const int64_t x_in = cols.first + k * cols.step;
          const C v = to_compute(row[x_in * input.strides[3]]);
          if (is_nan(result)) break;
          if (is_nan(v) || result < v) {
            result = v;
            position = y * input.sizes[3] + x_in;
          }
        }
      }
      if (indices.data) {
        static_cast<int64_t*>(indices.data)[n * indices.strides[0] + c * indices.strides[1] +
                                            y * indices.strides[2] + x * indices.strides[3]] =
            position;
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

// The outputs o along one dimension whose windows may hold input index i: those from `first`
// to `last`, both included (none where first > last).
struct OutputRange {
  int64_t first;
  int64_t last;
};

// a / b rounded towards -infinity, for b > 0.
__device__ __forceinline__ int64_t floor_divide(int64_t a, int64_t b) {
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}

__device__ OutputRange outputs_reading(PoolKind kind, const SlidingWindow& w, int d, int64_t i,
                                       int64_t in_size, int64_t out_size) {
  int64_t first, last;
  if (kind == PoolKind::AdaptiveAverage) {
    // Window o is [floor(o * in / out), ceil((o + 1) * in / out)): its end passes i from
    // o = floor(i * out / in) on, and its start reaches i up to o = ceil((i + 1) * out / in) - 1.
    first = i * out_size / in_size;
    last = ((i + 1) * out_size + in_size - 1) / in_size - 1;
  } else {
    // o * stride - padding <= i <= o * stride - padding + (kernel - 1) * dilation.
    const int64_t reach = (w.kernel[d] - 1) * w.dilation[d];
    first = floor_divide(i + w.padding[d] - reach + w.stride[d] - 1, w.stride[d]);
    last = floor_divide(i + w.padding[d], w.stride[d]);
  }
  return {first < 0 ? 0 : first, last < out_size - 1 ? last : out_size - 1};
}

// Whether output o's window along dimension d holds input index i (not merely its span: with
// dilation a window skips indices; adaptive windows are checked exactly).
__device__ bool window_holds(PoolKind kind, const SlidingWindow& w, int d, int64_t o, int64_t i,
                             int64_t in_size, int64_t out_size) {
  const Taps taps = window_taps(kind, w, d, o, in_size, out_size);
  if (i < taps.first || taps.count == 0) return false;
  const int64_t offset = i - taps.first;
  return offset % taps.step == 0 && offset / taps.step < taps.count;
}

// One thread per element of grad_input, gathering from the outputs whose windows hold it, in
// output order.
template <typename T>
__global__ void __launch_bounds__(kPoolThreads)
    pool2d_backward(PoolKind kind, Image grad_output, Image indices, Image grad_input,
                    SlidingWindow window, int64_t total) {
  using C = compute_t<T>;
  const T* grad = static_cast<const T*>(grad_output.data);
  const int64_t* picked = static_cast<const int64_t*>(indices.data);
  T* result = static_cast<T*>(grad_input.data);
  const int64_t in_h = grad_input.sizes[2], in_w = grad_input.sizes[3];
  const int64_t out_h = grad_output.sizes[2], out_w = grad_output.sizes[3];
  const int64_t channels = grad_input.sizes[1];
  for (int64_t i = global_thread(); i < total; i += grid_threads()) {
    const int64_t x = i % in_w;
    const int64_t y = i / in_w % in_h;
    const int64_t c = i / (in_w * in_h) % channels;
    const int64_t n = i / (in_w * in_h * channels);
    const OutputRange rows = outputs_reading(kind, window, 0, y, in_h, out_h);
    const OutputRange cols = outputs_reading(kind, window, 1, x, in_w, out_w);
    const T* plane = grad + n * grad_output.strides[0] + c * grad_output.strides[1];
    const int64_t* plane_indices =
        picked ? picked + n * indices.strides[0] + c * indices.strides[1] : nullptr;
    const int64_t position = y * in_w + x;
    C sum = 0;
    for (int64_t oy = rows.first; oy <= rows.last; ++oy) {
      const bool row_holds =
          kind == PoolKind::Max || window_holds(kind, window, 0, oy, y, in_h, out_h);
      if (!row_holds) continue;
      for (int64_t ox = cols.first; ox <= cols.last; ++ox) {
        const C g = to_compute(plane[oy * grad_output.strides[2] + ox * grad_output.strides[3]]);
        if (kind == PoolKind::Max) {
          if (plane_indices[oy * indices.strides[2] + ox * indices.strides[3]] == position)
            sum += g;
          continue;
        }
        if (!window_holds(kind, window, 1, ox, x, in_w, out_w)) continue;
        const int64_t divisor = window.divisor_override != 0
                                    ? window.divisor_override
                                    : window_taps(kind, window, 0, oy, in_h, out_h).divisor *
                                          window_taps(kind, window, 1, ox, in_w, out_w).divisor;
        sum += g / static_cast<C>(divisor);
      }
    }
    result[n * grad_input.strides[0] + c * grad_input.strides[1] + y * grad_input.strides[2] +
           x * grad_input.strides[3]] = from_compute<T>(sum);
  }
}

// Records in `error` the first element of `indices` (in N, C, H, W order) that lies outside a
// plane of `plane_size` members: max pooling's gradient must not follow it.
__global__ void __launch_bounds__(kPoolThreads)
    check_pool_indices(Image indices, int64_t plane_size, int64_t total, IndexError* error) {
  const int64_t* picked = static_cast<const int64_t*>(indices.data);
  const int64_t width = indices.sizes[3], height = indices.sizes[2], channels = indices.sizes[1];
  for (int64_t i = global_thread(); i < total; i += grid_threads()) {
    const int64_t x = i % width;
    const int64_t y = i / width % height;
    const int64_t c = i / (width * height) % channels;
    const int64_t n = i / (width * height * channels);
    const int64_t index = picked[n * indices.strides[0] + c * indices.strides[1] +
                                 y * indices.strides[2] + x * indices.strides[3]];
    if (index < 0 || index >= plane_size)
      atomicMin(&error->first_position, static_cast<unsigned long long>(i));
  }
}

}  // namespace
}  // namespace bp::cuda
