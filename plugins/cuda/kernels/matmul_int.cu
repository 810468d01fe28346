// Launches of the integer matrix product (matmul_int.cuh).
#include "kernels/matmul_int.cuh"

namespace bp::cuda {

void launch_integer_matmul(DType dtype, int64_t batches, int64_t n, int64_t k, int64_t m, const MatrixOperand& a,
                           const MatrixOperand& b, const MatrixOperand& addend, void* out,
                           const int64_t (&out_strides)[3], const Scalar& alpha, const Scalar& beta,
                           const LaunchTarget& target) {
  if (batches == 0 || n == 0 || m == 0) return;
  dispatch_dtype<IntegerDType>("matmul", dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const OutputMatrix output{out, {out_strides[0], out_strides[1], out_strides[2]}};
    integer_matmul<T><<<integer_matmul_grid(batches, n, m), dim3(kTile, kTile), 0, target.stream>>>(
        batches, n, k, m, a, b, addend, output, alpha.to<int64_t>(), beta.to<int64_t>());
    check_launch("integer_matmul");
  });
}

}  // namespace bp::cuda
