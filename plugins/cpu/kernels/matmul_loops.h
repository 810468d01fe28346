// Matrix products with the plugin's own loops, for the dtypes oneDNN has no matmul for (float64
// and the integers) and for empty inner dimensions. Rows are split across the plugin's thread
// pool in blocks; within a block, the output tile, and the panel of mat2 it reads, stay in cache
// while the inner dimension is walked in slices.
#pragma once

#include "kernels/activations.h"
#include "kernels/matmul_problem.h"
#include "kernels/strided_loop.h"
#include "runtime/thread_pool.h"

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace bp::cpu {
namespace matmul_loops_detail {

// A tile of out is kRowBlock x kColBlock accumulators; each slice of the inner dimension reads
// kDepthBlock x kColBlock elements of mat2 (256 KiB of float64, within a core's L2 cache).
inline constexpr int64_t kRowBlock = 16;
inline constexpr int64_t kColBlock = 256;
inline constexpr int64_t kDepthBlock = 128;
// Less work than this (multiply-adds) runs on the calling thread alone.
inline constexpr int64_t kMinParallelWork = int64_t{1} << 16;

// The type products are summed in: the compute type for floating dtypes (float for the 16-bit
// ones, as BLAS does), int64 for integers, whose final conversion wraps to the same value as
// wrapping at every step would.
template <typename T>
using accumulator_t =
    std::conditional_t<std::is_floating_point_v<compute_t<T>>, compute_t<T>, int64_t>;

}  // namespace matmul_loops_detail

// The product of T operands (any dtype but Bool) with the plugin's own loops.
template <typename T>
void loop_matmul(const MatmulProblem& problem) {
  using matmul_loops_detail::kColBlock;
  using matmul_loops_detail::kDepthBlock;
  using matmul_loops_detail::kMinParallelWork;
  using matmul_loops_detail::kRowBlock;
  using Acc = matmul_loops_detail::accumulator_t<T>;
  const int64_t n = problem.n(), k = problem.k(), m = problem.m();
  const MatrixOperand& a = problem.a;
  const MatrixOperand& b = problem.b;
  const MatrixOperand& out = problem.out;
  const Acc alpha = problem.alpha.to<Acc>();
  const Acc beta = problem.addend ? problem.beta.to<Acc>() : Acc(0);
  const auto* a_data = static_cast<const T*>(a.data);
  const auto* b_data = static_cast<const T*>(b.data);
  auto* out_data = static_cast<T*>(out.data);
  const auto* addend_data = problem.addend ? static_cast<const T*>(problem.addend->data) : nullptr;
  auto value = [](T element) { return static_cast<Acc>(static_cast<compute_t<T>>(element)); };
  // Floating dtypes only: the core refuses activations of integer products.
  auto activate = [activation = problem.activation](Acc x) {
    if constexpr (std::is_floating_point_v<Acc>) {
      switch (activation) {
        case Activation::None: return x;
        case Activation::Relu: return relu_of(x);
        case Activation::GeluTanh: return gelu_tanh(x);
      }
    }
    return x;
  };

  const int64_t row_blocks = (n + kRowBlock - 1) / kRowBlock;
  const int64_t work_per_block = std::max<int64_t>(1, kRowBlock * m * k);
  const int64_t grain = std::max<int64_t>(1, kMinParallelWork / work_per_block);
  parallel_for(problem.batch() * row_blocks, grain, [&](int64_t begin, int64_t end) {
    std::vector<Acc> tile(static_cast<size_t>(kRowBlock * kColBlock));
    for (int64_t task = begin; task < end; ++task) {
      const int64_t batch = task / row_blocks;
      const int64_t row_begin = (task % row_blocks) * kRowBlock;
      const int64_t row_end = std::min(n, row_begin + kRowBlock);
      for (int64_t col_begin = 0; col_begin < m; col_begin += kColBlock) {
        const int64_t width = std::min(kColBlock, m - col_begin);
        std::fill(tile.begin(), tile.end(), Acc(0));
        for (int64_t depth_begin = 0; depth_begin < k; depth_begin += kDepthBlock) {
          const int64_t depth_end = std::min(k, depth_begin + kDepthBlock);
          for (int64_t i = row_begin; i < row_end; ++i) {
            Acc* tile_row = &tile[static_cast<size_t>((i - row_begin) * kColBlock)];
            for (int64_t p = depth_begin; p < depth_end; ++p) {
              const Acc a_ip = value(a_data[a.offset(batch, i, p)]);
              const T* b_row = b_data + b.offset(batch, p, col_begin);
              if (b.col_stride == 1) {
                for (int64_t j = 0; j < width; ++j) tile_row[j] += a_ip * value(b_row[j]);
              } else {
                for (int64_t j = 0; j < width; ++j) {
                  tile_row[j] += a_ip * value(b_row[j * b.col_stride]);
                }
              }
            }
          }
        }
        for (int64_t i = row_begin; i < row_end; ++i) {
          const Acc* tile_row = &tile[static_cast<size_t>((i - row_begin) * kColBlock)];
          for (int64_t j = 0; j < width; ++j) {
            Acc result = alpha * tile_row[j];
            if (beta != Acc(0)) {
              result += beta * value(addend_data[problem.addend->offset(batch, i, col_begin + j)]);
            }
            out_data[out.offset(batch, i, col_begin + j)] = static_cast<T>(activate(result));
          }
        }
      }
    }
  });
}

}  // namespace bp::cpu
