// Matrix products: mm, bmm and addmm over any strides. Plain loops in i-k-j order, so that the
// innermost loop walks a row of mat2 and a row of the result; a BLAS backend is faster.
#include "CPUNativeFunctions.h"

#include "dtypes.h"
#include "strided_loop.h"

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace bp::cpu {
namespace {

template <typename T>
struct Matrix {
  T* data;
  int64_t row_stride;
  int64_t col_stride;

  T& operator()(int64_t i, int64_t j) const { return data[i * row_stride + j * col_stride]; }
};

template <typename T>
Matrix<T> matrix(T* data, const TensorView& view, int64_t first_dim) {
  return {data, view.stride(first_dim), view.stride(first_dim + 1)};
}

// The type products are summed in: the compute type for floating dtypes (float for the 16-bit
// ones, as BLAS does), int64 for integers, whose final conversion wraps to the same value as
// wrapping at every step would.
template <typename T>
using accumulator_t =
    std::conditional_t<std::is_floating_point_v<compute_t<T>>, compute_t<T>, int64_t>;

// out = alpha * (a @ b) + beta * addend for one (n x k) @ (k x m) product; with beta == 0
// the addend is not read at all (it may hold NaN), as in BLAS and PyTorch. `row` is scratch
// space of m accumulators.
template <typename T, typename Acc = accumulator_t<T>>
void matmul_into(Matrix<const T> a, Matrix<const T> b, Matrix<T> out, int64_t n, int64_t k,
                 int64_t m, Acc alpha, Acc beta, Matrix<const T> addend, std::vector<Acc>& row) {
  for (int64_t i = 0; i < n; ++i) {
    std::fill(row.begin(), row.end(), Acc(0));
    for (int64_t p = 0; p < k; ++p) {
      const Acc a_ip = static_cast<Acc>(static_cast<compute_t<T>>(a(i, p)));
      const T* b_row = &b(p, 0);
      if (b.col_stride == 1) {
        for (int64_t j = 0; j < m; ++j)
          row[j] += a_ip * static_cast<Acc>(static_cast<compute_t<T>>(b_row[j]));
      } else {
        for (int64_t j = 0; j < m; ++j) {
          row[j] += a_ip * static_cast<Acc>(static_cast<compute_t<T>>(b_row[j * b.col_stride]));
        }
      }
    }
    for (int64_t j = 0; j < m; ++j) {
      Acc result = alpha * row[j];
      if (beta != Acc(0))
        result += beta * static_cast<Acc>(static_cast<compute_t<T>>(addend(i, j)));
      out(i, j) = static_cast<T>(result);
    }
  }
}

// A batch of products: operands are (batch, rows, cols) views; a 2-d operand is one batch of
// one. addend, if any, is addressed through `addend_strides` over out's shape.
void batched_matmul(std::string_view op, const TensorView& a, const TensorView& b,
                    const TensorView& out, const bp::Scalar& alpha, const bp::Scalar& beta,
                    const TensorView* addend, std::span<const int64_t> addend_strides) {
  require_dtype(op, "mat2", b, a.dtype());
  require_dtype(op, "out", out, a.dtype());
  if (addend) require_dtype(op, "self", *addend, a.dtype());
  plugin::check(a.dim() == out.dim() && b.dim() == out.dim(),
                std::string(op) + ": operands and result must have the same number of dimensions");
  const bool batched = out.dim() == 3;
  const int64_t first = batched ? 1 : 0;  // the first matrix dimension
  const int64_t batches = batched ? out.size(0) : 1;
  const int64_t n = a.size(first), k = a.size(first + 1), m = b.size(first + 1);
  visit_supported<NonBoolDType>(op, out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using Acc = accumulator_t<T>;
    const Matrix<const T> addend_matrix =
        addend ? Matrix<const T>{addend->data<const T>(), addend_strides[0], addend_strides[1]}
               : Matrix<const T>{nullptr, 0, 0};
    std::vector<Acc> row(static_cast<size_t>(m));
    for (int64_t batch = 0; batch < batches; ++batch) {
      const int64_t a_offset = batched ? batch * a.stride(0) : 0;
      const int64_t b_offset = batched ? batch * b.stride(0) : 0;
      const int64_t out_offset = batched ? batch * out.stride(0) : 0;
      matmul_into<T>(matrix(a.data<const T>() + a_offset, a, first),
                     matrix(b.data<const T>() + b_offset, b, first),
                     matrix(out.data<T>() + out_offset, out, first), n, k, m, alpha.to<Acc>(),
                     addend ? beta.to<Acc>() : Acc(0), addend_matrix, row);
    }
  });
}

}  // namespace

void mm_out(const TensorView& self, const TensorView& mat2, const TensorView& out) {
  batched_matmul("mm", self, mat2, out, /*alpha=*/1, /*beta=*/0, nullptr, {});
}

void bmm_out(const TensorView& self, const TensorView& mat2, const TensorView& out) {
  batched_matmul("bmm", self, mat2, out, /*alpha=*/1, /*beta=*/0, nullptr, {});
}

// self broadcasts to out's (n, m), as in PyTorch.
void addmm_out(const TensorView& self, const TensorView& mat1, const TensorView& mat2,
               const bp::Scalar& beta, const bp::Scalar& alpha, const TensorView& out) {
  const DimValues<int64_t> self_strides = broadcast_strides("addmm", self, out.sizes());
  batched_matmul("addmm", mat1, mat2, out, alpha, beta, &self, self_strides.span());
}

}  // namespace bp::cpu
