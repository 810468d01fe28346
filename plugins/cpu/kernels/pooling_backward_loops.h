// Max pooling that also returns where each maximum came from, and the backward passes of the
// 2-D pooling ops, on the plugin's own loops for every floating dtype. A backward pass scatters
// each output gradient into the input positions its window read; windows overlap, so each
// input plane is summed in the compute type in a buffer of its own and stored once. Planes are
// split across the thread pool.
#pragma once

#include "kernels/nan_propagation.h"
#include "runtime/thread_pool.h"

#include <backplane/sdk/status.hpp>
#include <backplane/sdk/window2d.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace bp::cpu {

namespace pooling_backward_detail {

// Less work than this (elements touched) runs on the calling thread alone.
inline constexpr int64_t kMinParallelWork = int64_t{1} << 15;

inline int64_t grain_for_planes(int64_t plane_size) {
  return std::max<int64_t>(1, kMinParallelWork / std::max<int64_t>(1, plane_size));
}

// grad_input's plane (n, c) set to `sums` (H * W values, row-major) converted to T.
template <typename T, typename C>
void store_plane(const TensorView& grad_input, int64_t n, int64_t c, const std::vector<C>& sums) {
  T* plane = grad_input.data<T>() + n * grad_input.stride(0) + c * grad_input.stride(1);
  const int64_t width = grad_input.size(3);
  for (int64_t y = 0; y < grad_input.size(2); ++y) {
    T* row = plane + y * grad_input.stride(2);
    const C* values = sums.data() + y * width;
    for (int64_t x = 0; x < width; ++x) row[x * grad_input.stride(3)] = static_cast<T>(values[x]);
  }
}

// For every plane of grad_input, a zeroed buffer of its H * W sums that `scatter(n, c, sums)`
// adds into, then stored.
template <typename T, typename Scatter>
void scatter_planes(const TensorView& grad_input, int64_t work_per_plane, Scatter scatter) {
  using C = compute_t<T>;
  const int64_t channels = grad_input.size(1);
  const int64_t plane_size = grad_input.size(2) * grad_input.size(3);
  parallel_for(grad_input.size(0) * channels, grain_for_planes(work_per_plane),
               [&](int64_t begin, int64_t end) {
                 std::vector<C> sums(static_cast<size_t>(plane_size));
                 for (int64_t plane = begin; plane < end; ++plane) {
                   const int64_t n = plane / channels, c = plane % channels;
                   std::fill(sums.begin(), sums.end(), C{0});
                   scatter(n, c, sums);
                   store_plane<T>(grad_input, n, c, sums);
                 }
               });
}

}  // namespace pooling_backward_detail

// out[n, c, y, x] = the max of input's window (y, x), and indices[n, c, y, x] its flat index
// iy * W + ix in the input plane, as PyTorch picks it: the first of equal maxima, the last NaN,
// and the window's first tap inside the input where every tap is -inf.
template <typename T>
void max_pool2d_with_indices_loops(const TensorView& input, const TensorView& out,
                                   const TensorView& indices, const plugin::Window2d& window) {
  using C = compute_t<T>;
  const plugin::PoolAxis rows = plugin::pooling_axis(window, 0, input.size(2), out.size(2), false);
  const plugin::PoolAxis cols = plugin::pooling_axis(window, 1, input.size(3), out.size(3), false);
  const int64_t channels = out.size(1), width = input.size(3);
  const int64_t grain = pooling_backward_detail::grain_for_planes(input.size(2) * input.size(3));
  parallel_for(out.size(0) * channels, grain, [&](int64_t begin, int64_t end) {
    for (int64_t plane = begin; plane < end; ++plane) {
      const int64_t n = plane / channels, c = plane % channels;
      const T* in_plane = input.data<const T>() + n * input.stride(0) + c * input.stride(1);
      T* out_plane = out.data<T>() + n * out.stride(0) + c * out.stride(1);
      int64_t* index_plane =
          indices.data<int64_t>() + n * indices.stride(0) + c * indices.stride(1);
      for (int64_t y = 0; y < out.size(2); ++y) {
        for (int64_t x = 0; x < out.size(3); ++x) {
          C best = -std::numeric_limits<C>::infinity();
          int64_t best_index = rows.first[y] * width + cols.first[x];
          for (int64_t i = 0; i < rows.count[y]; ++i) {
            const int64_t iy = rows.first[y] + i * rows.step;
            for (int64_t j = 0; j < cols.count[x]; ++j) {
              const int64_t ix = cols.first[x] + j * cols.step;
              const C value = static_cast<C>(in_plane[iy * input.stride(2) + ix * input.stride(3)]);
              if (value > best || value != value) {
                best = value;
                best_index = iy * width + ix;
              }
            }
          }
          out_plane[y * out.stride(2) + x * out.stride(3)] = static_cast<T>(best);
          index_plane[y * indices.stride(2) + x * indices.stride(3)] = best_index;
        }
      }
    }
  });
}

// grad_input[n, c] = the sum of grad_output[n, c, y, x] over the outputs whose index at
// (y, x) names each input position. An index outside the plane is refused.
template <typename T>
void max_pool2d_backward_loops(const TensorView& grad_output, const TensorView& indices,
                               const TensorView& grad_input) {
  using C = compute_t<T>;
  const int64_t plane_size = grad_input.size(2) * grad_input.size(3);
  pooling_backward_detail::scatter_planes<T>(
      grad_input, grad_output.size(2) * grad_output.size(3),
      [&](int64_t n, int64_t c, std::vector<C>& sums) {
        const T* grad_plane =
            grad_output.data<const T>() + n * grad_output.stride(0) + c * grad_output.stride(1);
        const int64_t* index_plane =
            indices.data<const int64_t>() + n * indices.stride(0) + c * indices.stride(1);
        for (int64_t y = 0; y < grad_output.size(2); ++y) {
          for (int64_t x = 0; x < grad_output.size(3); ++x) {
            const int64_t index = index_plane[y * indices.stride(2) + x * indices.stride(3)];
            // The message is built only on failure: this runs once per element.
            if (index < 0 || index >= plane_size) {
              throw plugin::Error(
                  BP_STATUS_INVALID_ARGUMENT,
                  "max_pool2d_with_indices_backward: index " + std::to_string(index) +
                      " lies outside an input plane of " + std::to_string(plane_size) +
                      " elements; pass the indices max_pool2d_with_indices returned");
            }
            sums[static_cast<size_t>(index)] +=
                static_cast<C>(grad_plane[y * grad_output.stride(2) + x * grad_output.stride(3)]);
          }
        }
      });
}

// grad_input[n, c] = the sum, over the windows (rows, cols) that read each input position, of
// grad_output at the window divided by rows.divisor[y] * cols.divisor[x] (or by
// `divisor_override`): the backward pass of average_pool2d_loops.
template <typename T>
void average_pool2d_backward_loops(const TensorView& grad_output, const TensorView& grad_input,
                                   const plugin::PoolAxis& rows, const plugin::PoolAxis& cols,
                                   std::optional<int64_t> divisor_override) {
  using C = compute_t<T>;
  const int64_t width = grad_input.size(3);
  pooling_backward_detail::scatter_planes<T>(
      grad_input, grad_input.size(2) * grad_input.size(3),
      [&](int64_t n, int64_t c, std::vector<C>& sums) {
        const T* grad_plane =
            grad_output.data<const T>() + n * grad_output.stride(0) + c * grad_output.stride(1);
        for (int64_t y = 0; y < grad_output.size(2); ++y) {
          for (int64_t x = 0; x < grad_output.size(3); ++x) {
            const int64_t divisor =
                divisor_override ? *divisor_override : rows.divisor[y] * cols.divisor[x];
            const C share =
                static_cast<C>(grad_plane[y * grad_output.stride(2) + x * grad_output.stride(3)]) /
                static_cast<C>(divisor);
            for (int64_t i = 0; i < rows.count[y]; ++i) {
              C* row = sums.data() + (rows.first[y] + i * rows.step) * width + cols.first[x];
              for (int64_t j = 0; j < cols.count[x]; ++j) row[j * cols.step] += share;
            }
          }
        }
      });
}

}  // namespace bp::cpu
