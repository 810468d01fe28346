// The integer matrix product kernel (matmul_int.cuh) on emulated launches (emulated_launch.h):
// int64 sums wrapped to the dtype, alpha and beta, strided and batched operands, and products
// whose sizes are not whole tiles.
#include "emulated_launch.h"

#include "kernels/matmul_int.cuh"

#include "cuda_test_support.h"

#include <cstdint>
#include <random>
#include <vector>

namespace {

// out = alpha * (a @ b) + beta * addend over `batches`, a transposed in memory, with the
// kernel's arithmetic: int64 sums, wrapped to T once at the end.
template <typename T>
void check_integer_matmul(int64_t batches, int64_t n, int64_t k, int64_t m, int64_t alpha,
                          int64_t beta) {
  INFO(batches << " x (" << n << " x " << k << ") @ (" << k << " x " << m << "), alpha " << alpha
               << ", beta " << beta);
  std::mt19937 random(8);
  std::uniform_int_distribution<int> values(-100, 100);
  std::vector<T> a(static_cast<size_t>(batches * n * k)), b(static_cast<size_t>(batches * k * m)),
      addend(static_cast<size_t>(n * m)), out(static_cast<size_t>(batches * n * m), T(-1));
  for (T& v : a) v = static_cast<T>(values(random));
  for (T& v : b) v = static_cast<T>(values(random));
  for (T& v : addend) v = static_cast<T>(values(random));
  // a stored as (batch, column, row); the addend one matrix broadcast over the batches.
  const bp::cuda::MatrixOperand a_operand{a.data(), {n * k, 1, n}};
  const bp::cuda::MatrixOperand b_operand{b.data(), {k * m, m, 1}};
  const bp::cuda::MatrixOperand addend_operand{addend.data(), {0, m, 1}};
  const bp::cuda::OutputMatrix out_matrix{out.data(), {n * m, m, 1}};
  bp::cuda::emulated::launch(bp::cuda::integer_matmul_grid(batches, n, m),
                             dim3(bp::cuda::kTile, bp::cuda::kTile), 0, [&] {
                               bp::cuda::integer_matmul<T>(batches, n, k, m, a_operand, b_operand,
                                                           addend_operand, out_matrix, alpha, beta);
                             });
  for (int64_t batch = 0; batch < batches; ++batch) {
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < m; ++j) {
        int64_t total = 0;
        for (int64_t p = 0; p < k; ++p) {
          total += static_cast<int64_t>(a[static_cast<size_t>(batch * n * k + p * n + i)]) *
                   static_cast<int64_t>(b[static_cast<size_t>(batch * k * m + p * m + j)]);
        }
        const auto expected =
            static_cast<T>(static_cast<uint64_t>(alpha) * static_cast<uint64_t>(total) +
                           static_cast<uint64_t>(beta) *
                               static_cast<uint64_t>(addend[static_cast<size_t>(i * m + j)]));
        INFO("out[" << batch << ", " << i << ", " << j << "]");
        REQUIRE(out[static_cast<size_t>(batch * n * m + i * m + j)] == expected);
      }
    }
  }
}

TEST_CASE(
    "emulated integer matmul kernel: partial tiles, strides, batches, alpha and beta, wrapping") {
  check_integer_matmul<int32_t>(2, 19, 37, 21, 1, 0);
  check_integer_matmul<int64_t>(1, 33, 16, 17, -3, 2);
  // Sums of int8 products overflow int8 and wrap once at the end.
  check_integer_matmul<int8_t>(3, 5, 40, 18, 2, 1);
  check_integer_matmul<uint8_t>(1, 16, 0, 16, 1, 1);  // no inner dim: beta * addend alone
}

}  // namespace
