// Matrix products: mm, bmm, addmm and _addmm_activation. Floating dtypes go to cuBLASLt (addmm's
// bias row and ReLU fused as its epilogue where cuBLASLt can; GELU as a pass of its own, since
// cuBLASLt's GELU epilogue is not the tanh formula); integer dtypes to the tiled kernel of
// kernels/matmul_int.cu. Operands cuBLASLt cannot read as they are laid out (no unit stride,
// broadcast batches) are copied to dense scratch first; an output it cannot write, or one that
// overlaps an input, is computed in scratch and copied out.
#include "CUDANativeFunctions.h"

#include "runtime/tensor_access.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

namespace bp::cuda {
namespace {

// A batch of matrices: element (batch, row, col) at data + the strides (in elements).
struct Matrices {
  char* data = nullptr;
  DType dtype = DType::Float32;
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t batch_stride = 0;
  int64_t row_stride = 0;
  int64_t col_stride = 0;

  size_t element_bytes() const { return element_size(dtype); }
  std::array<int64_t, 3> sizes(int64_t batches) const { return {batches, rows, cols}; }
  std::array<int64_t, 3> strides() const { return {batch_stride, row_stride, col_stride}; }
};

// A tensor of 2 (one batch) or 3 dimensions as matrices.
Matrices matrices_of(const TensorView& view) {
  const bool batched = view.dim() == 3;
  const int64_t first = batched ? 1 : 0;
  return {address_of(view),
          view.dtype(),
          view.size(first),
          view.size(first + 1),
          batched ? view.stride(0) : 0,
          view.stride(first),
          view.stride(first + 1)};
}

// The addresses the matrices span, as [first, last).
std::pair<uintptr_t, uintptr_t> byte_span(const Matrices& m, int64_t batches) {
  int64_t low = 0, high = 0;
  const auto sizes = m.sizes(batches);
  const auto strides = m.strides();
  for (size_t d = 0; d < 3; ++d) {
    const int64_t reach = (sizes[d] - 1) * strides[d];
    (reach < 0 ? low : high) += reach;
  }
  const auto size = static_cast<int64_t>(m.element_bytes());
  const auto base = reinterpret_cast<uintptr_t>(m.data);
  return {base + low * size, base + (high + 1) * size};
}

bool overlap(const Matrices& a, const Matrices& b, int64_t batches) {
  const auto [a_first, a_last] = byte_span(a, batches);
  const auto [b_first, b_last] = byte_span(b, batches);
  return a_first < b_last && b_first < a_last;
}

// How cuBLASLt reads `m` (transposed when `transpose`) as a column-major operand, if it can: one
// of its strides must be 1 and the other at least the extent it steps over. Strides of size-1
// dimensions do not matter and are chosen to fit. Batches must not overlap (stride 0 included).
std::optional<BlasMatrix> as_blas(const Matrices& m, bool transpose, int64_t batches) {
  BlasMatrix result;
  result.data = m.data;
  const int64_t rows = std::max<int64_t>(m.rows, 1), cols = std::max<int64_t>(m.cols, 1);
  if (batches > 1) {
    if (std::abs(m.batch_stride) < rows * cols) return std::nullopt;
    result.batch_stride = m.batch_stride;
  }
  const int64_t rs = m.rows == 1 ? 1 : m.row_stride;
  const int64_t cs = m.cols == 1 ? rows : m.col_stride;
  if (rs == 1 && cs >= rows) {  // column-major as stored
    result.rows = static_cast<uint64_t>(m.rows);
    result.cols = static_cast<uint64_t>(m.cols);
    result.ld = cs;
    result.transposed = transpose;
    return result;
  }
  const int64_t rs_row_major = m.rows == 1 ? cols : m.row_stride;
  const int64_t cs_row_major = m.cols == 1 ? 1 : m.col_stride;
  if (cs_row_major == 1 && rs_row_major >= cols) {  // row-major: its transpose, column-major
    result.rows = static_cast<uint64_t>(m.cols);
    result.cols = static_cast<uint64_t>(m.rows);
    result.ld = rs_row_major;
    result.transposed = !transpose;
    return result;
  }
  return std::nullopt;
}

// Scratch for dense row-major copies of matrices, given back when the product is queued.
class Staging {
 public:
  explicit Staging(Device& device) : device_(device), scratch_(device) {}

  // Dense row-major matrices of m's shape and dtype, uninitialised.
  Matrices dense_like(const Matrices& m, int64_t batches) {
    Matrices dense = m;
    dense.data = static_cast<char*>(
        scratch_.allocate(static_cast<size_t>(batches * m.rows * m.cols) * m.element_bytes()));
    dense.col_stride = 1;
    dense.row_stride = m.cols;
    dense.batch_stride = m.rows * m.cols;
    return dense;
  }

  // A dense copy of m.
  Matrices dense_copy(const Matrices& m, int64_t batches) {
    Matrices dense = dense_like(m, batches);
    copy(dense, m, batches);
    return dense;
  }

  // to = from, both of one shape and dtype.
  void copy(const Matrices& to, const Matrices& from, int64_t batches) {
    const auto sizes = to.sizes(batches);
    const auto to_strides = to.strides(), from_strides = from.strides();
    for_each_launch<2>(
        device_, sizes,
        {Operand{to.data, to_strides, to.element_bytes()},
         Operand{from.data, from_strides, from.element_bytes()}},
        [&](const ElementwiseLaunch<2>& launch) { launch_copy_bits(to.element_bytes(), launch); });
  }

 private:
  Device& device_;
  DeviceScratch scratch_;
};

// What _addmm_activation applies to the result.
enum class Activation { None, Relu, GeluTanh };

// The epilogue cuBLASLt may fuse for `activation`. Its GELU epilogue is not the tanh formula
// that the other backends compute, and departs from it by more than the conformance tolerances
// (most in bfloat16), so GELU never goes to it.
BlasActivation epilogue_for(Activation activation) {
  return activation == Activation::Relu ? BlasActivation::Relu : BlasActivation::None;
}

// The activation applied in place to every element of `m`, where cuBLASLt did not fuse it.
void activate(Device& device, const Matrices& m, int64_t batches, Activation activation) {
  if (activation == Activation::None) return;
  const UnaryOp op = activation == Activation::Relu ? UnaryOp::Relu : UnaryOp::GeluTanh;
  const auto sizes = m.sizes(batches);
  const auto strides = m.strides();
  const Operand operand{m.data, strides, m.element_bytes()};
  for_each_launch<2>(device, sizes, {operand, operand}, [&](const ElementwiseLaunch<2>& launch) {
    launch_unary(op, m.dtype, launch);
  });
}

// out = activation(alpha * (a @ b) + beta * addend), batch by batch; `addend` (addmm's self), if
// any, is `addend_view` read through `addend_strides` over out's (rows, cols). With beta == 0
// the addend is not read at all (it may hold NaN), as in BLAS and PyTorch. An activation is for
// floating dtypes only. Kernel is the op's kernel_dtypes type: the dtypes it declares are the
// ones computed.
template <typename Kernel>
void matmul_into(std::string_view op, const TensorView& a_view, const TensorView& b_view,
                 const TensorView& out_view, const Scalar& alpha, const Scalar& beta,
                 const TensorView* addend_view, std::span<const int64_t> addend_strides,
                 Activation activation = Activation::None) {
  require_dtype(op, "mat2", b_view, a_view.dtype());
  require_dtype(op, "out", out_view, a_view.dtype());
  if (addend_view) require_dtype(op, "self", *addend_view, a_view.dtype());
  plugin::check((out_view.dim() == 2 || out_view.dim() == 3) && a_view.dim() == out_view.dim() &&
                    b_view.dim() == out_view.dim(),
                std::string(op) +
                    ": operands and result must all be matrices or all batches of them");
  const DType dtype = out_view.dtype();
  plugin::require_dtype_of<Kernel>(dtype);
  const bool batched = out_view.dim() == 3;
  const int64_t batches = batched ? out_view.size(0) : 1;
  Matrices a = matrices_of(a_view), b = matrices_of(b_view), out = matrices_of(out_view);
  const int64_t n = out.rows, m = out.cols, k = a.cols;
  if (batches == 0 || n == 0 || m == 0) return;

  const OnDevice on(out_view);
  Device& device = on.device();
  const LaunchTarget target = device.launch_target();
  const bool uses_addend = addend_view != nullptr && beta.to<double>() != 0;
  Matrices addend;
  if (uses_addend) {
    addend = {address_of(*addend_view), dtype, n, m, 0, addend_strides[0], addend_strides[1]};
  }

  if (k == 0) {  // an empty sum: out = beta * addend, or zeros
    Staging staging(device);
    // An addend that overlaps out (addmm_) is read before out is cleared.
    if (uses_addend && overlap(out, addend, batches)) addend = staging.dense_copy(addend, batches);
    fill__Scalar(out_view, 0);
    if (uses_addend) {
      const auto sizes = out.sizes(batches);
      const auto out_strides = out.strides(), addend_strides3 = addend.strides();
      const Operand out_operand{out.data, out_strides, out.element_bytes()};
      for_each_launch<3>(
          device, sizes,
          {out_operand, out_operand, Operand{addend.data, addend_strides3, addend.element_bytes()}},
          [&](const ElementwiseLaunch<3>& launch) {
            launch_binary(BinaryOp::Add, dtype, launch, beta);
          });
    }
    activate(device, out, batches, activation);
    return;
  }

  Staging staging(device);
  // The result goes to scratch when it overlaps an input, or (for cuBLASLt) cannot be written as
  // laid out; it is copied to out at the end.
  const bool integer = !is_floating_point(dtype);
  const bool out_aliases_input = overlap(out, a, batches) || overlap(out, b, batches);
  const bool out_unwritable =
      !integer && !as_blas(out, true, batches) && !as_blas(out, false, batches);
  const Matrices result =
      out_aliases_input || out_unwritable ? staging.dense_like(out, batches) : out;

  if (integer) {
    const MatrixOperand a_operand{a.data, {a.batch_stride, a.row_stride, a.col_stride}};
    const MatrixOperand b_operand{b.data, {b.batch_stride, b.row_stride, b.col_stride}};
    const MatrixOperand addend_operand{uses_addend ? addend.data : nullptr,
                                       {0, addend.row_stride, addend.col_stride}};
    const int64_t result_strides[3] = {result.batch_stride, result.row_stride, result.col_stride};
    launch_integer_matmul<Kernel>(dtype, batches, n, k, m, a_operand, b_operand, addend_operand,
                                  result.data, result_strides, alpha, beta, target);
  } else {
    BlasProduct product;
    product.dtype = dtype;
    product.batches = batches;
    product.alpha = alpha.to<double>();
    product.activation = epilogue_for(activation);
    // D = out^T = b^T @ a^T when the result is row-major (the bias then runs along out's rows);
    // D = out = a @ b when it is column-major.
    const bool row_major =
        as_blas(result, true, batches).has_value() && !as_blas(result, true, batches)->transposed;
    const std::optional<BlasMatrix> d = as_blas(result, row_major, batches);
    plugin::check(d && !d->transposed,
                  std::string(op) + ": the result's layout is not one cuBLASLt writes");
    product.d = *d;
    const Matrices& first = row_major ? b : a;
    const Matrices& second = row_major ? a : b;
    std::optional<BlasMatrix> blas_first = as_blas(first, row_major, batches);
    if (!blas_first) blas_first = as_blas(staging.dense_copy(first, batches), row_major, batches);
    std::optional<BlasMatrix> blas_second = as_blas(second, row_major, batches);
    if (!blas_second)
      blas_second = as_blas(staging.dense_copy(second, batches), row_major, batches);
    product.a = *blas_first;
    product.b = *blas_second;

    // addmm's self as a row (stride 0 down the rows, dense along them): cuBLASLt's bias. Some of
    // its bias epilogues read the bias in 16-byte vectors; the heuristic reads the alignment off
    // the bias pointer, but a bias that starts elsewhere takes the addend path all the same, so
    // that no algorithm choice depends on it.
    const bool bias_row = uses_addend && !batched && row_major && beta.to<double>() == 1 &&
                          addend.row_stride == 0 && (addend.col_stride == 1 || m == 1) &&
                          reinterpret_cast<uintptr_t>(addend.data) % 16 == 0;
    bool done = false;
    if (bias_row) {
      product.bias = addend.data;
      done = device.blas().try_multiply(product, target.stream);
      product.bias = nullptr;
    }
    if (!done) {
      if (uses_addend) {
        staging.copy(result, addend, batches);
        product.beta = beta.to<double>();
      }
      bool multiplied = device.blas().try_multiply(product, target.stream);
      if (!multiplied && product.activation != BlasActivation::None) {
        // No epilogue for this activation and dtype: the plain product, then the activation.
        product.activation = BlasActivation::None;
        multiplied = device.blas().try_multiply(product, target.stream);
      }
      if (!multiplied) {
        throw plugin::Error(BP_STATUS_UNIMPLEMENTED,
                            std::string(op) + ": cuBLASLt has no algorithm for a " +
                                std::to_string(n) + "x" + std::to_string(k) + " @ " +
                                std::to_string(k) + "x" + std::to_string(m) + " product of " +
                                std::string(dtype_name(dtype)));
      }
    }
    if (product.activation == BlasActivation::None) activate(device, result, batches, activation);
  }
  if (result.data != out.data) staging.copy(out, result, batches);
}

}  // namespace

void mm_out(const TensorView& self, const TensorView& mat2, const TensorView& out) {
  matmul_into<kernel_dtypes::mm_out>("mm", self, mat2, out, /*alpha=*/1, /*beta=*/0, nullptr, {});
}

void bmm_out(const TensorView& self, const TensorView& mat2, const TensorView& out) {
  matmul_into<kernel_dtypes::bmm_out>("bmm", self, mat2, out, /*alpha=*/1, /*beta=*/0, nullptr, {});
}

// self broadcasts to out's (n, m), as in PyTorch.
void addmm_out(const TensorView& self, const TensorView& mat1, const TensorView& mat2,
               const Scalar& beta, const Scalar& alpha, const TensorView& out) {
  const DimValues<int64_t> self_strides = plugin::broadcast_strides("addmm", self, out.sizes());
  matmul_into<kernel_dtypes::addmm_out>("addmm", mat1, mat2, out, alpha, beta, &self,
                                        self_strides.span());
}

// addmm, then ReLU (cuBLASLt's epilogue, fused with the bias where addmm fuses it) or GELU in its
// tanh approximation, on the dtypes _addmm_activation declares (fewer than addmm's).
void _addmm_activation_out(const TensorView& self, const TensorView& mat1, const TensorView& mat2,
                           const Scalar& beta, const Scalar& alpha, bool use_gelu,
                           const TensorView& out) {
  constexpr std::string_view op = "_addmm_activation";
  plugin::require_dtype_of<kernel_dtypes::_addmm_activation_out>(out.dtype());
  const DimValues<int64_t> self_strides = plugin::broadcast_strides(op, self, out.sizes());
  matmul_into<kernel_dtypes::addmm_out>(op, mat1, mat2, out, alpha, beta, &self,
                                        self_strides.span(),
                                        use_gelu ? Activation::GeluTanh : Activation::Relu);
}

}  // namespace bp::cuda
