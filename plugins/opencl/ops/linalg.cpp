// Matrix products: mm, bmm, addmm and _addmm_activation over any strides, with the kernels of
// kernels/matmul.cl; the activation runs on the result in place.
#include "OpenCLNativeFunctions.h"

#include "kernels/scalar_args.h"
#include "runtime/kernel_launch.h"

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace bp::opencl {
namespace {

// WORK in kernels/matmul.cl: each work-item of matmul computes WORK x WORK elements of out.
constexpr size_t kMatmulWork = 8;
// ROW_WORK and COL_WORK: each work-item of matmul_rows computes this many rows and columns.
constexpr int64_t kRowsWork = 8;
constexpr int64_t kColumnsWork = 32;

// A MATRIX kernel operand: element (batch, row, col) of a (batch, rows, cols) or (rows, cols)
// view; a 2-d view is one batch (batch stride 0).
void add_matrix(KernelArgs& args, const Buffer& buffer, std::span<const int64_t> strides) {
  const bool batched = strides.size() == 3;
  args.add(buffer).add(batched ? strides[0] : int64_t{0});
  args.add(strides[strides.size() - 2]).add(strides[strides.size() - 1]);
}

// out = alpha * (a @ b) + beta * addend, batch by batch; `addend` (addmm's self), if any, is
// addressed through `addend_strides` over out's (rows, cols).
void matmul_into(std::string_view op, const TensorView& a, const TensorView& b,
                 const TensorView& out, const Scalar& alpha, const Scalar& beta,
                 const TensorView* addend, std::span<const int64_t> addend_strides) {
  Device& device = device_of(out);
  require_dtype(op, "mat2", b, a.dtype());
  require_dtype(op, "out", out, a.dtype());
  if (addend) require_dtype(op, "self", *addend, a.dtype());
  device.require_double_precision_for(op, out.dtype());
  plugin::check((out.dim() == 2 || out.dim() == 3) && a.dim() == out.dim() && b.dim() == out.dim(),
                std::string(op) +
                    ": operands and result must all be matrices or all batches of them");
  const bool batched = out.dim() == 3;
  const int64_t first = batched ? 1 : 0;  // the first matrix dimension
  const int64_t batches = batched ? out.size(0) : 1;
  const int64_t n = a.size(first), k = a.size(first + 1), m = b.size(first + 1);
  if (batches == 0 || n == 0 || m == 0) return;

  KernelArgs args;
  args.add(n).add(k).add(m);
  add_matrix(args, buffer_of(a), a.strides());
  add_matrix(args, buffer_of(b), b.strides());
  add_matrix(args, buffer_of(out), out.strides());
  if (addend) {
    args.add(buffer_of(*addend)).add(int64_t{0}).add(addend_strides[0]).add(addend_strides[1]);
  } else {
    add_matrix(args, buffer_of(out), out.strides());  // not read
  }
  args.add(product_scalar(out.dtype(), alpha))
      .add(product_scalar(out.dtype(), addend ? beta : Scalar(0)))
      .add(cl_int{addend != nullptr});

  WorkSize work;
  work.dims = 3;
  if (device.kernel_shape() == KernelShape::Cpu) {
    // One work-item per ROW_WORK x COL_WORK block of out, in work-groups of one (see
    // kernels/matmul.cl): the driver runs them side by side on its threads.
    work.global = {blocks_covering(n, kRowsWork), blocks_covering(m, kColumnsWork),
                   static_cast<size_t>(batches)};
    launch(device, device.program(KernelSource::Matmul, out.dtype()), "matmul_rows", args, work);
    return;
  }
  // A TILE x TILE work-group per BLOCK x BLOCK block of out.
  const auto block = static_cast<int64_t>(device.tile() * kMatmulWork);
  work.global = {blocks_covering(m, block) * device.tile(),
                 blocks_covering(n, block) * device.tile(), static_cast<size_t>(batches)};
  work.local = {device.tile(), device.tile(), 1};
  launch(device, device.program(KernelSource::Matmul, out.dtype()), "matmul", args, work);
}

}  // namespace

void mm_out(const TensorView& self, const TensorView& mat2, const TensorView& out) {
  plugin::require_dtype_of<plugin::kernel_dtypes::mm_out>(out.dtype());
  matmul_into("mm", self, mat2, out, /*alpha=*/1, /*beta=*/0, nullptr, {});
}

void bmm_out(const TensorView& self, const TensorView& mat2, const TensorView& out) {
  plugin::require_dtype_of<plugin::kernel_dtypes::bmm_out>(out.dtype());
  matmul_into("bmm", self, mat2, out, /*alpha=*/1, /*beta=*/0, nullptr, {});
}

// self broadcasts to out's (n, m), as in PyTorch.
void addmm_out(const TensorView& self, const TensorView& mat1, const TensorView& mat2,
               const Scalar& beta, const Scalar& alpha, const TensorView& out) {
  plugin::require_dtype_of<plugin::kernel_dtypes::addmm_out>(out.dtype());
  const auto self_strides = plugin::broadcast_strides("addmm", self, out.sizes());
  matmul_into("addmm", mat1, mat2, out, alpha, beta, &self, self_strides.span());
}

// addmm, then ReLU or GELU (tanh approximation, as every backend's fused epilogue) in place.
void _addmm_activation_out(const TensorView& self, const TensorView& mat1, const TensorView& mat2,
                           const Scalar& beta, const Scalar& alpha, bool use_gelu,
                           const TensorView& out) {
  plugin::require_dtype_of<plugin::kernel_dtypes::_addmm_activation_out>(out.dtype());
  addmm_out(self, mat1, mat2, beta, alpha, out);
  if (use_gelu) {
    gelu_out(out, "tanh", out);
  } else {
    relu_out(out, out);
  }
}

}  // namespace bp::opencl
