// index_add and embedding's gradient without atomics: after the positions of the index are
// sorted by the row each names (indexed_rows.cu), `starts` holds where each row's positions begin
// among them, and each element of out sums its row's terms in the order of the index, so results
// are the same on every run and match the CPU backend's order.
//
// Launched by indexed_rows.cu; a header so that the host tests compile these kernels too
// (tests/cuda/emulated_launch.h).
#pragma once

#include "kernels/gather.cuh"

#include <type_traits>

namespace bp::cuda {
// Internal to each includer: the kernel library and the host tests each compile their own.
namespace {

constexpr int kIndexedRowThreads = 256;

// Records the first position of `index` whose value is outside [0, rows).
__global__ void __launch_bounds__(kIndexedRowThreads)
    check_row_indices(const int64_t* index, int64_t n, int64_t rows, IndexError* error) {
  for (int64_t i = global_thread(); i < n; i += grid_threads()) {
    if (index[i] < 0 || index[i] >= rows)
      atomicMin(&error->first_position, static_cast<unsigned long long>(i));
  }
}

__global__ void __launch_bounds__(kIndexedRowThreads) iota(int64_t* values, int64_t n) {
  for (int64_t i = global_thread(); i < n; i += grid_threads()) values[i] = i;
}

// starts[r] = the first i with sorted_rows[i] >= r, for r in [0, rows]: thread i writes the rows
// from just past sorted_rows[i - 1] to sorted_rows[i] (n > 0).
__global__ void __launch_bounds__(kIndexedRowThreads)
    row_starts(const int64_t* sorted_rows, int64_t n, int64_t rows, int64_t* starts) {
  for (int64_t i = global_thread(); i <= n; i += grid_threads()) {
    const int64_t previous = i == 0 ? -1 : sorted_rows[i - 1];
    const int64_t next = i == n ? rows : sorted_rows[i];
    for (int64_t r = previous + 1; r <= next; ++r) starts[r] = i;
  }
}

// sum + factor * value, wrapping for integers as the CPU backend's integers wrap.
template <typename C>
__device__ __forceinline__ C multiply_add(C sum, C factor, C value) {
  if constexpr (std::is_integral_v<C>) {
    using U = std::make_unsigned_t<C>;
    return static_cast<C>(static_cast<U>(
        static_cast<U>(sum) + static_cast<U>(static_cast<U>(factor) * static_cast<U>(value))));
  } else {
    return sum + factor * value;
  }
}

// What the sums kernel reads besides the sorted positions.
template <typename C>
struct RowSums {
  int64_t outer, rows, n, inner;
  C alpha;
  bool embedding;
  int64_t padding_row;
  bool scale_by_frequency;
};

template <typename T>
__global__ void __launch_bounds__(kIndexedRowThreads)
    indexed_row_sums(RowSums<compute_t<T>> shape, const int64_t* __restrict__ starts,
                     const int64_t* __restrict__ positions, const T* __restrict__ base,
                     const T* __restrict__ source, T* __restrict__ out, int64_t total) {
  using C = compute_t<T>;
  for (int64_t i = global_thread(); i < total; i += grid_threads()) {
    const int64_t column = i % shape.inner;
    const int64_t row = i / shape.inner % shape.rows;
    const int64_t o = i / (shape.inner * shape.rows);
    const int64_t begin = starts[row], end = starts[row + 1];
    C factor = shape.alpha;
    if (shape.embedding) {
      if constexpr (std::is_floating_point_v<C>) {
        factor = row == shape.padding_row   ? C(0)
                 : shape.scale_by_frequency ? C(1) / static_cast<C>(end - begin)
                                            : C(1);
      }
    }
    C sum = base ? to_compute(base[i]) : C(0);
    const T* slices = source + o * shape.n * shape.inner + column;
    for (int64_t j = begin; j < end; ++j)
      sum = multiply_add(sum, factor, to_compute(slices[positions[j] * shape.inner]));
    out[i] = from_compute<T>(sum);
  }
}

}  // namespace
}  // namespace bp::cuda
