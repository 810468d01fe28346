#include "pooling_loops.h"

#include "dtypes.h"
#include "thread_pool.h"

#include <algorithm>
#include <limits>

namespace bp::cpu {
namespace {

// Less work than this (elements read) runs on the calling thread alone.
constexpr int64_t kMinParallelWork = int64_t{1} << 15;

// out's plane (n, c): each output element reduces its window of input's plane.
template <typename T>
void pool_plane(const TensorView& input, const TensorView& out, int64_t n, int64_t c,
                const PoolAxis& rows, const PoolAxis& cols, PoolReduction reduction,
                std::optional<int64_t> divisor_override) {
  using Compute = compute_t<T>;
  const int64_t y_step = rows.step * input.stride(2), x_step = cols.step * input.stride(3);
  const T* in_plane = input.data<const T>() + n * input.stride(0) + c * input.stride(1);
  T* out_plane = out.data<T>() + n * out.stride(0) + c * out.stride(1);
  for (int64_t y = 0; y < out.size(2); ++y) {
    for (int64_t x = 0; x < out.size(3); ++x) {
      const T* window =
          in_plane + rows.first[y] * input.stride(2) + cols.first[x] * input.stride(3);
      Compute result;
      if (reduction == PoolReduction::Max) {
        result = -std::numeric_limits<Compute>::infinity();
        for (int64_t i = 0; i < rows.count[y]; ++i) {
          for (int64_t j = 0; j < cols.count[x]; ++j) {
            result =
                max_propagating_nan(result, static_cast<Compute>(window[i * y_step + j * x_step]));
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

}  // namespace

void pool2d_loops(const TensorView& input, const TensorView& out, const PoolAxis& rows,
                  const PoolAxis& cols, PoolReduction reduction,
                  std::optional<int64_t> divisor_override) {
  const int64_t channels = out.size(1);
  const int64_t grain =
      std::max<int64_t>(1, kMinParallelWork / std::max<int64_t>(1, input.size(2) * input.size(3)));
  visit_supported<FloatingDType>("pooling", out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    parallel_for(out.size(0) * channels, grain, [&](int64_t begin, int64_t end) {
      for (int64_t plane = begin; plane < end; ++plane) {
        pool_plane<T>(input, out, plane / channels, plane % channels, rows, cols, reduction,
                      divisor_override);
      }
    });
  });
}

}  // namespace bp::cpu
