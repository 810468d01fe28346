// Matrix products: mm, bmm, addmm and _addmm_activation (addmm with a relu or tanh GELU fused)
// over any strides. float32 runs through oneDNN, as do float16 and bfloat16 (natively where
// this CPU's oneDNN supports them, else in float32 blocks); float64 and the integers run on the
// plugin's own loops (matmul_problem.h, matmul_loops.h).
#include "CPUNativeFunctions.h"

#include "kernels/matmul_loops.h"
#include "kernels/matmul_problem.h"
#include "kernels/strided_loop.h"

#include <span>
#include <string>
#include <string_view>
#include <type_traits>

namespace bp::cpu {
namespace {

// A 2-D or 3-D view as a batch of matrices, addressed through `strides` over `sizes` (the
// view's own, or broadcast ones).
MatrixOperand operand_of(const TensorView& view, std::span<const int64_t> sizes,
                         std::span<const int64_t> strides) {
  MatrixOperand m;
  m.data = view.data<char>();
  const size_t first = sizes.size() == 3 ? 1 : 0;  // the first matrix dimension
  if (first == 1) {
    m.batch = sizes[0];
    m.batch_stride = strides[0];
  }
  m.rows = sizes[first];
  m.cols = sizes[first + 1];
  m.row_stride = strides[first];
  m.col_stride = strides[first + 1];
  return m;
}

MatrixOperand operand_of(const TensorView& view) {
  return operand_of(view, view.sizes(), view.strides());
}

// The product, for the dtypes Kernel takes: float32 through oneDNN, float16 and bfloat16 through
// oneDNN natively or in float32 blocks, the others on the plugin's loops.
template <typename Kernel>
void run(const MatmulProblem& problem) {
  plugin::visit_dtype<Kernel>(problem.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (problem.batch() == 0 || problem.n() == 0 || problem.m() == 0) return;
    // With nothing to sum, out is beta * addend or zero: the loops handle every dtype.
    if (problem.k() == 0) return loop_matmul<T>(problem);
    if constexpr (std::is_same_v<T, float>) {
      onednn_matmul(problem);
    } else if constexpr (kConvertsToCompute<T>) {  // float16, bfloat16
      if (onednn_matmul_supports(problem.dtype)) {
        onednn_matmul(problem);
      } else {
        float32_block_matmul(problem);
      }
    } else {
      loop_matmul<T>(problem);
    }
  });
}

MatmulProblem product(std::string_view op, const TensorView& a, const TensorView& b,
                      const TensorView& out) {
  require_dtype(op, "mat2", b, a.dtype());
  require_dtype(op, "out", out, a.dtype());
  plugin::check(a.dim() == out.dim() && b.dim() == out.dim(),
                std::string(op) + ": operands and result must have the same number of dimensions");
  MatmulProblem problem;
  problem.dtype = out.dtype();
  problem.a = operand_of(a);
  problem.b = operand_of(b);
  problem.out = operand_of(out);
  return problem;
}

MatmulProblem addmm_problem(std::string_view op, const TensorView& self, const TensorView& mat1,
                            const TensorView& mat2, const bp::Scalar& beta, const bp::Scalar& alpha,
                            const TensorView& out, Activation activation) {
  MatmulProblem problem = product(op, mat1, mat2, out);
  require_dtype(op, "self", self, mat1.dtype());
  const DimValues<int64_t> self_strides = broadcast_strides(op, self, out.sizes());
  problem.addend = operand_of(self, out.sizes(), self_strides.span());
  problem.alpha = alpha;
  problem.beta = beta;
  problem.activation = activation;
  return problem;
}

}  // namespace

void mm_out(const TensorView& self, const TensorView& mat2, const TensorView& out) {
  run<kernel_dtypes::mm_out>(product("mm", self, mat2, out));
}

void bmm_out(const TensorView& self, const TensorView& mat2, const TensorView& out) {
  run<kernel_dtypes::bmm_out>(product("bmm", self, mat2, out));
}

// self broadcasts to out's (n, m), as in PyTorch; a bias row (linear's) is fused into the
// product, and so is the activation.
void addmm_out(const TensorView& self, const TensorView& mat1, const TensorView& mat2,
               const bp::Scalar& beta, const bp::Scalar& alpha, const TensorView& out) {
  run<kernel_dtypes::addmm_out>(
      addmm_problem("addmm", self, mat1, mat2, beta, alpha, out, Activation::None));
}

void _addmm_activation_out(const TensorView& self, const TensorView& mat1, const TensorView& mat2,
                           const bp::Scalar& beta, const bp::Scalar& alpha, bool use_gelu,
                           const TensorView& out) {
  run<kernel_dtypes::_addmm_activation_out>(
      addmm_problem("_addmm_activation", self, mat1, mat2, beta, alpha, out,
                    use_gelu ? Activation::GeluTanh : Activation::Relu));
}

}  // namespace bp::cpu
