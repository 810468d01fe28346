// A batched transpose through shared-memory tiles: conv2d's channels-last formulation moves its
// tensors between NCHW and NHWC with it (kernels/transpose.cu), since cuDNN's tensor-core
// convolutions on Hopper read and write NHWC. Each block takes 32 x 32 tiles of one matrix: it
// reads a tile's rows along the source's contiguous dim and writes its columns along the
// target's, so that both sides are coalesced.
//
// Launched by transpose.cu; a header so that the host tests compile this kernel too
// (tests/cuda/emulated_launch.h).
#pragma once

#include "kernels/device_support.cuh"

#include <cstdint>

namespace bp::cuda {
// Internal to each includer: the kernel library and the host tests each compile their own.
namespace {

constexpr int kTransposeTile = 32;
// A block of 32 x 8 threads: each thread moves 4 elements of a tile each way.
constexpr int kTransposeTileRowsPerPass = 8;
constexpr int kTransposeThreads = kTransposeTile * kTransposeTileRowsPerPass;

// Tiles of `shape`'s matrices, walked grid-stride by the blocks: tile `index` lies in matrix
// index / (row_tiles * col_tiles), rows first.
struct TransposeTiles {
  TransposeShape shape;
  int64_t row_tiles;
  int64_t col_tiles;
  int64_t count;
};

inline TransposeTiles transpose_tiles(const TransposeShape& shape) {
  TransposeTiles tiles{shape, (shape.rows + kTransposeTile - 1) / kTransposeTile,
                       (shape.cols + kTransposeTile - 1) / kTransposeTile, 0};
  tiles.count = shape.batches * tiles.row_tiles * tiles.col_tiles;
  return tiles;
}

// out[b][c][r] = in[b][r][c], bits moved unchanged. blockDim is (32, 8).
template <typename Bits>
__global__ void __launch_bounds__(kTransposeThreads)
    transpose_kernel(const Bits* __restrict__ in, Bits* __restrict__ out, TransposeTiles tiles) {
  // One column of padding: a warp reading a tile's column meets 32 different banks.
  __shared__ Bits tile[kTransposeTile][kTransposeTile + 1];
  const TransposeShape& s = tiles.shape;
  const int64_t per_matrix = tiles.row_tiles * tiles.col_tiles;
  const auto x = static_cast<int>(threadIdx.x), y = static_cast<int>(threadIdx.y);
  for (int64_t index = blockIdx.x; index < tiles.count; index += gridDim.x) {
    const int64_t batch = index / per_matrix;
    const int64_t within = index - batch * per_matrix;
    const int64_t row0 = within / tiles.col_tiles * kTransposeTile;
    const int64_t col0 = within % tiles.col_tiles * kTransposeTile;
    const Bits* source = in + batch * s.in_batch_stride;
    const int64_t col = col0 + x;
    for (int i = y; i < kTransposeTile; i += kTransposeTileRowsPerPass) {
      const int64_t row = row0 + i;
      if (row < s.rows && col < s.cols) tile[i][x] = source[row * s.in_row_stride + col];
    }
    __syncthreads();
    Bits* target = out + batch * s.out_batch_stride;
    const int64_t row = row0 + x;
    for (int i = y; i < kTransposeTile; i += kTransposeTileRowsPerPass) {
      const int64_t target_row = col0 + i;  // a column of the source
      if (target_row < s.cols && row < s.rows)
        target[target_row * s.out_row_stride + row] = tile[x][i];
    }
    // The next tile overwrites what this one's threads may still be reading.
    __syncthreads();
  }
}

}  // namespace
}  // namespace bp::cuda
