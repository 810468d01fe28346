// A (batched) matrix product as the CPU backend's three ways of computing one see it, and the
// two of them that run on oneDNN: through oneDNN (matmul_onednn.cpp), and through oneDNN in
// float32 blocks for 16-bit dtypes this CPU's oneDNN lacks (matmul_float32_blocks.cpp). The
// third, the plugin's own loops for the dtypes oneDNN has no matmul for (float64, integers),
// is matmul_loops.h.
#pragma once

#include "kernels/strided_loop.h"

#include <backplane/sdk/plugin.hpp>

#include <cstdint>
#include <optional>
#include <span>

namespace bp::cpu {

// `batch` matrices of rows x cols: element (b, i, j) lies at
// data + b * batch_stride + i * row_stride + j * col_stride, counted in elements.
struct MatrixOperand {
  void* data = nullptr;
  int64_t batch = 1, rows = 0, cols = 0;
  int64_t batch_stride = 0, row_stride = 0, col_stride = 0;

  int64_t offset(int64_t b, int64_t i, int64_t j) const {
    return b * batch_stride + i * row_stride + j * col_stride;
  }
  // Batch b alone (rows [row_begin, row_end) of it), with the same strides.
  MatrixOperand slice(int64_t b, int64_t row_begin, int64_t row_end, size_t element_size) const;
};

// What a product applies to each element of its result before storing it.
enum class Activation { None, Relu, GeluTanh };

// out = activation(alpha * (a @ b) + beta * addend) for every batch. a is (batch, n, k), b (batch,
// k, m), out and addend (batch, n, m); a or b may repeat one matrix over the batch (batch_stride
// 0), the addend may repeat a row or column (stride 0). Without an addend, or with beta == 0, only
// alpha * (a @ b) is written: the addend is not read at all (it may hold NaN), as in BLAS.
struct MatmulProblem {
  DType dtype = DType::Float32;
  MatrixOperand a, b, out;
  std::optional<MatrixOperand> addend;
  Scalar alpha = 1;
  Scalar beta = 0;
  Activation activation = Activation::None;

  int64_t batch() const { return out.batch; }
  int64_t n() const { return out.rows; }
  int64_t k() const { return a.cols; }
  int64_t m() const { return out.cols; }
  // Batch b alone, rows [row_begin, row_end) of a, out and the addend.
  MatmulProblem slice(int64_t b, int64_t row_begin, int64_t row_end) const;
};

// Copies every element of `from` into `to` (same batch, rows and cols), converting From to To.
// Walks columns where both are column-major, rows otherwise, so that a transposed operand is read
// and written in memory order.
template <typename From, typename To>
void convert_matrix(const MatrixOperand& from, const MatrixOperand& to) {
  const bool by_columns = from.row_stride == 1 && to.row_stride == 1;
  const int64_t lines = by_columns ? to.cols : to.rows;
  const int64_t length = by_columns ? to.rows : to.cols;
  const int64_t from_line = by_columns ? from.col_stride : from.row_stride;
  const int64_t from_step = by_columns ? from.row_stride : from.col_stride;
  const int64_t to_line = by_columns ? to.col_stride : to.row_stride;
  const int64_t to_step = by_columns ? to.row_stride : to.col_stride;
  for (int64_t b = 0; b < to.batch; ++b) {
    const From* source = static_cast<const From*>(from.data) + b * from.batch_stride;
    To* target = static_cast<To*>(to.data) + b * to.batch_stride;
    for (int64_t line = 0; line < lines; ++line) {
      const From* source_line = source + line * from_line;
      To* target_line = target + line * to_line;
      if (from_step == 1 && to_step == 1) {
        convert_elements(source_line, target_line, length);
        continue;
      }
      for (int64_t j = 0; j < length; ++j) {
        target_line[j * to_step] =
            static_cast<To>(static_cast<compute_t<From>>(source_line[j * from_step]));
      }
    }
  }
}

// Whether this CPU's oneDNN computes matrix products in `dtype` (float32 always; float16 and
// bfloat16 on CPUs with the instructions for them).
bool onednn_matmul_supports(DType dtype);
// The product through oneDNN, for a dtype onednn_matmul_supports.
void onednn_matmul(const MatmulProblem& problem);
// The product of float16 or bfloat16 operands through oneDNN in float32, a block of rows at a
// time, converting each block in and out.
void float32_block_matmul(const MatmulProblem& problem);

}  // namespace bp::cpu
