// Matrix products of integer dtypes, which cuBLASLt does not compute with the CPU backend's
// semantics (int64 accumulation, wrapped to the dtype at the end): a shared-memory tiled kernel,
// any strides, batches along z.
//
// Launched by matmul_int.cu; a header so that the host tests compile these kernels too
// (tests/cuda/emulated_launch.h).
#pragma once

#include "kernels/device_support.cuh"

namespace bp::cuda {
// Internal to each includer: the kernel library and the host tests each compile their own.
namespace {

constexpr int kTile = 16;

struct OutputMatrix {
  void* data;
  int64_t strides[3];
};

template <typename T>
__device__ __forceinline__ int64_t element(const MatrixOperand& matrix, int64_t batch, int64_t row,
                                           int64_t col) {
  const T* data = static_cast<const T*>(matrix.data);
  return static_cast<int64_t>(
      data[batch * matrix.strides[0] + row * matrix.strides[1] + col * matrix.strides[2]]);
}

template <typename T>
__global__ void __launch_bounds__(kTile * kTile)
    integer_matmul(int64_t batches, int64_t n, int64_t k, int64_t m, MatrixOperand a,
                   MatrixOperand b, MatrixOperand addend, OutputMatrix out, int64_t alpha,
                   int64_t beta) {
  __shared__ int64_t a_tile[kTile][kTile + 1];
  __shared__ int64_t b_tile[kTile][kTile + 1];
  const int tx = static_cast<int>(threadIdx.x);
  const int ty = static_cast<int>(threadIdx.y);
  const int64_t row_tiles = (n + kTile - 1) / kTile;
  const int64_t col_tiles = (m + kTile - 1) / kTile;
  for (int64_t batch = blockIdx.z; batch < batches; batch += gridDim.z) {
    for (int64_t row_tile = blockIdx.y; row_tile < row_tiles; row_tile += gridDim.y) {
      for (int64_t col_tile = blockIdx.x; col_tile < col_tiles; col_tile += gridDim.x) {
        const int64_t row = row_tile * kTile + ty;
        const int64_t col = col_tile * kTile + tx;
        int64_t total = 0;
        for (int64_t k0 = 0; k0 < k; k0 += kTile) {
          a_tile[ty][tx] = row < n && k0 + tx < k ? element<T>(a, batch, row, k0 + tx) : 0;
          b_tile[ty][tx] = k0 + ty < k && col < m ? element<T>(b, batch, k0 + ty, col) : 0;
          __syncthreads();
#pragma unroll
          for (int i = 0; i < kTile; ++i) total += a_tile[ty][i] * b_tile[i][tx];
          __syncthreads();
        }
        if (row < n && col < m) {
          int64_t result = alpha * total;
          if (addend.data != nullptr && beta != 0)
            result += beta * element<T>(addend, batch, row, col);
          static_cast<T*>(
              out.data)[batch * out.strides[0] + row * out.strides[1] + col * out.strides[2]] =
              static_cast<T>(result);
        }
      }
    }
  }
}

// The grid of an integer_matmul launch: a block per output tile.
inline dim3 integer_matmul_grid(int64_t batches, int64_t n, int64_t m) {
  return tile_grid((m + kTile - 1) / kTile, (n + kTile - 1) / kTile, batches);
}

}  // namespace
}  // namespace bp::cuda
