// float16 and bfloat16 products on CPUs whose oneDNN has no 16-bit matmul: each block of rows
// is converted to float32, multiplied by oneDNN in float32 (accumulating in float32, as a
// 16-bit gemm does), and converted back. Blocks bound the temporary memory to mat2 in float32
// plus a few hundred rows.
#include "kernels/matmul_problem.h"

#include "runtime/scratch_buffer.h"

#include <algorithm>
#include <optional>

namespace bp::cpu {
namespace {

// Elements of float32 a block of rows takes in a, out and the addend together, about 4 MiB:
// oneDNN runs taller blocks faster, and larger ones would cost more memory for little.
constexpr int64_t kBlockElements = int64_t{1} << 20;

// A dense float32 matrix of rows x cols in `buffer`, row-major unless asked for column-major.
MatrixOperand dense_float32(const ScratchBuffer& buffer, int64_t rows, int64_t cols,
                            bool column_major = false) {
  MatrixOperand m;
  m.data = buffer.data();
  m.rows = rows;
  m.cols = cols;
  m.row_stride = column_major ? 1 : cols;
  m.col_stride = column_major ? rows : 1;
  m.batch_stride = rows * cols;
  return m;
}

template <typename T>
void blocks_of(const MatmulProblem& problem) {
  const int64_t n = problem.n(), k = problem.k(), m = problem.m();
  const bool reads_addend = problem.addend && problem.beta.to<double>() != 0;
  const bool addend_is_row = reads_addend && problem.addend->row_stride == 0;
  const int64_t block_rows = std::clamp<int64_t>(kBlockElements / (k + 2 * m), 1, n);

  const ScratchBuffer b_buffer(static_cast<size_t>(k * m) * sizeof(float));
  const ScratchBuffer a_buffer(static_cast<size_t>(block_rows * k) * sizeof(float));
  const ScratchBuffer out_buffer(static_cast<size_t>(block_rows * m) * sizeof(float));
  std::optional<ScratchBuffer> addend_buffer;
  if (reads_addend) {
    addend_buffer.emplace(static_cast<size_t>((addend_is_row ? 1 : block_rows) * m) *
                          sizeof(float));
  }

  for (int64_t b = 0; b < problem.batch(); ++b) {
    // mat2 keeps its orientation (linear's weight is transposed), so that its conversion
    // streams through memory; oneDNN takes either.
    const bool b_column_major = problem.b.row_stride == 1 && problem.b.col_stride != 1;
    const MatrixOperand b_float = dense_float32(b_buffer, k, m, b_column_major);
    convert_matrix<T, float>(problem.slice(b, 0, 0).b, b_float);
    if (addend_is_row) {
      convert_matrix<T, float>(problem.slice(b, 0, 1).addend.value(),
                               dense_float32(*addend_buffer, 1, m));
    }
    for (int64_t row = 0; row < n; row += block_rows) {
      const int64_t rows = std::min(block_rows, n - row);
      const MatmulProblem block = problem.slice(b, row, row + rows);
      MatmulProblem converted;
      converted.dtype = DType::Float32;
      converted.alpha = problem.alpha;
      converted.beta = problem.beta;
      converted.activation = problem.activation;
      converted.a = dense_float32(a_buffer, rows, k);
      converted.b = b_float;
      converted.out = dense_float32(out_buffer, rows, m);
      convert_matrix<T, float>(block.a, converted.a);
      if (addend_is_row) {
        converted.addend = dense_float32(*addend_buffer, rows, m);
        converted.addend->row_stride = 0;
      } else if (reads_addend) {
        converted.addend = dense_float32(*addend_buffer, rows, m);
        convert_matrix<T, float>(*block.addend, *converted.addend);
      }
      onednn_matmul(converted);
      convert_matrix<float, T>(converted.out, block.out);
    }
  }
}

}  // namespace

void float32_block_matmul(const MatmulProblem& problem) {
  switch (problem.dtype) {
    case DType::Float16: return blocks_of<Half>(problem);
    case DType::BFloat16: return blocks_of<BFloat16>(problem);
    default:
      throw Error(BP_STATUS_INTERNAL, "matmul: float32 blocks are for float16 and bfloat16 only");
  }
}

}  // namespace bp::cpu
