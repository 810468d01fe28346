#include "pooling_loops.h"

#include "dtypes.h"
#include "thread_pool.h"

#include <algorithm>
#include <limits>

namespace bp::cpu {
namespace {

// Less work than this (elements read) runs on the calling thread alone.
constexpr int64_t kMinParallelWork = int64_t{1} << 15;

template <typename T>
void pool_planes(const TensorView& input, const TensorView& out, const PoolAxis& rows,
                 const PoolAxis& cols, PoolReduction reduction,
                 std::optional<int64_t> divisor_override) {
  using Compute = compute_t<T>;
  const int64_t channels = out.size(1);
  const int64_t out_height = out.size(2), out_width = out.size(3);
  const int64_t y_step = rows.step * input.stride(2), x_step = cols.step * input.stride(3);
  const int64_t work_per_plane = std::max<int64_t>(1, input.size(2) * input.size(3));
  parallel_for(out.size(0) * channels, std::max<int64_t>(1, kMinParallelWork / work_per_plane),
               [&](int64_t begin, int64_t end) {
    for (int64_t plane = begin; plane < end; ++plane) {
      const int64_t n = plane / channels, c = plane % channels;
      const T* in_plane = input.data<const T>() + n * input.stride(0) + c * input.stride(1);
      T* out_plane = out.data<T>() + n * out.stride(0) + c * out.stride(1);
      for (int64_t y = 0; y < out_height; ++y) {
        const T* window_top = in_plane + rows.first[y] * input.stride(2);
        for (int64_t x = 0; x < out_width; ++x) {
          const T* window = window_top + cols.first[x] * input.stride(3);
          Compute result;
          if (reduction == PoolReduction::Max) {
            result = -std::numeric_limits<Compute>::infinity();
            for (int64_t i = 0; i < rows.count[y]; ++i) {
              for (int64_t j = 0; j < cols.count[x]; ++j) {
                result = max_propagating_nan(result,
                                             static_cast<Compute>(window[i * y_step + j * x_step]));
              }
            }
          } else {
            Compute sum = 0;
            for (int64_t i = 0; i < rows.count[y]; ++i) {
              for (int64_t j = 0; j < cols.count[x]; ++j) {
                sum += static_cast<Compute>(window[i * y_step + j * x_step]);
              }
            }
            const int64_t divisor =
                divisor_override ? *divisor_override : rows.divisor[y] * cols.divisor[x];
            result = sum / static_cast<Compute>(divisor);
          }
          out_plane[y * out.stride(2) + x * out.stride(3)] = static_cast<T>(result);
        }
      }
    }
  });
}

}  // namespace

PoolAxis pooling_axis(const plugin::Window2d& window, int d, int64_t in_size, int64_t out_size,
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
    axis.divisor.push_back(include_padding
                               ? std::min(start + window.kernel[d], in_size + padding) - start
                               : count);
  }
  return axis;
}

PoolAxis adaptive_axis(int64_t in_size, int64_t out_size) {
  PoolAxis axis;
  for (int64_t o = 0; o < out_size; ++o) {
    const int64_t start = plugin::adaptive_window_start(o, in_size, out_size);
    const int64_t end = plugin::adaptive_window_end(o, in_size, out_size);
    axis.first.push_back(start);
    axis.count.push_back(end - start);
    axis.divisor.push_back(end - start);
  }
  return axis;
}

void pool2d_loops(const TensorView& input, const TensorView& out, const PoolAxis& rows,
                  const PoolAxis& cols, PoolReduction reduction,
                  std::optional<int64_t> divisor_override) {
  visit_supported<FloatingDType>("pooling", out.dtype(), [&](auto tag) {
    pool_planes<typename decltype(tag)::type>(input, out, rows, cols, reduction, divisor_override);
  });
}

}  // namespace bp::cpu
