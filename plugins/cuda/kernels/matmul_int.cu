// Launches of the integer matrix product (matmul_int.cuh).
#include "kernels/matmul_int.cuh"

namespace bp::cuda {
namespace {

// The dtypes of the linalg ops that this kernel multiplies (the floating ones go to cuBLASLt).
constexpr plugin::DTypeSet kIntegerDTypes =
    plugin::dtype_set({DType::Int8, DType::UInt8, DType::Int32, DType::Int64});

}  // namespace

template <typename Kernel>
void launch_integer_matmul(DType dtype, int64_t batches, int64_t n, int64_t k, int64_t m,
                           const MatrixOperand& a, const MatrixOperand& b,
                           const MatrixOperand& addend, void* out, const int64_t (&out_strides)[3],
                           const Scalar& alpha, const Scalar& beta, const LaunchTarget& target) {
  if (batches == 0 || n == 0 || m == 0) return;
  plugin::visit_dtype<Kernel, kIntegerDTypes>(dtype, [&](auto tag) {
    using T = device_t<typename decltype(tag)::type>;
    const OutputMatrix output{out, {out_strides[0], out_strides[1], out_strides[2]}};
    const dim3 grid = integer_matmul_grid(batches, n, m);
    integer_matmul<T><<<grid, dim3(kTile, kTile), 0, target.stream>>>(
        batches, n, k, m, a, b, addend, output, alpha.to<int64_t>(), beta.to<int64_t>());
    check_launch("integer_matmul");
  });
}

template void launch_integer_matmul<kernel_dtypes::mm_out>(DType, int64_t, int64_t, int64_t,
                                                           int64_t, const MatrixOperand&,
                                                           const MatrixOperand&,
                                                           const MatrixOperand&, void*,
                                                           const int64_t (&)[3], const Scalar&,
                                                           const Scalar&, const LaunchTarget&);
template void launch_integer_matmul<kernel_dtypes::bmm_out>(DType, int64_t, int64_t, int64_t,
                                                            int64_t, const MatrixOperand&,
                                                            const MatrixOperand&,
                                                            const MatrixOperand&, void*,
                                                            const int64_t (&)[3], const Scalar&,
                                                            const Scalar&, const LaunchTarget&);
template void launch_integer_matmul<kernel_dtypes::addmm_out>(DType, int64_t, int64_t, int64_t,
                                                              int64_t, const MatrixOperand&,
                                                              const MatrixOperand&,
                                                              const MatrixOperand&, void*,
                                                              const int64_t (&)[3], const Scalar&,
                                                              const Scalar&, const LaunchTarget&);

}  // namespace bp::cuda
