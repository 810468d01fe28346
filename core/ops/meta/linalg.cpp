// Meta functions of the matrix products. As in PyTorch the operands must share one dtype (no
// promotion); which dtypes each product takes, ops.yaml declares. The kernel may assume the
// shapes checked below, one dtype throughout and one device; the output is contiguous.
#include "meta_support.h"

#include <core_generated/MetaFunctions.h>

#include <fmt/format.h>

namespace bp::meta {
namespace {

void check_rank(const Tensor& t, int64_t rank, const char* op, const char* name) {
  if (t.dim() != rank) {
    throw Error(fmt::format("{}: expected {} to be a {}-D tensor, got a {}-D tensor of shape {}",
                            op, name, rank, t.dim(), detail::format_shape(t.sizes())));
  }
}

void check_same_dtype(const Tensor& a, const Tensor& b, const char* op, const char* name_a,
                      const char* name_b) {
  if (a.dtype() != b.dtype()) {
    throw Error(
        fmt::format("{}: expected {} and {} to have the same dtype, but got {} != {}; "
                    "convert one with .to(dtype)",
                    op, name_a, name_b, dtype_name(a.dtype()), dtype_name(b.dtype())));
  }
}

void check_multipliable(const Tensor& mat1, const Tensor& mat2, const char* op) {
  if (mat1.size(-1) != mat2.size(-2)) {
    throw Error(fmt::format("{}: mat1 and mat2 shapes cannot be multiplied ({}x{} and {}x{})", op,
                            mat1.size(-2), mat1.size(-1), mat2.size(-2), mat2.size(-1)));
  }
}

}  // namespace

// mm: self [n, m] @ mat2 [m, p] -> out [n, p].
std::array<OutputSpec, 1> mm_out(Tensor& self, Tensor& mat2) {
  const Device device = support::common_device({&self, &mat2});
  check_rank(self, 2, "mm", "self");
  check_rank(mat2, 2, "mm", "mat2");
  check_same_dtype(self, mat2, "mm", "self", "mat2");
  check_multipliable(self, mat2, "mm");
  return {OutputSpec{{self.size(0), mat2.size(1)}, self.dtype(), device}};
}

// bmm: self [b, n, m] @ mat2 [b, m, p] -> out [b, n, p]; batch sizes are equal (no
// broadcasting; bp::matmul broadcasts).
std::array<OutputSpec, 1> bmm_out(Tensor& self, Tensor& mat2) {
  const Device device = support::common_device({&self, &mat2});
  check_rank(self, 3, "bmm", "self");
  check_rank(mat2, 3, "bmm", "mat2");
  check_same_dtype(self, mat2, "bmm", "self", "mat2");
  if (self.size(0) != mat2.size(0)) {
    throw Error(
        fmt::format("bmm: expected self and mat2 to have the same batch size, got {} "
                    "(shape {}) and {} (shape {})",
                    self.size(0), detail::format_shape(self.sizes()), mat2.size(0),
                    detail::format_shape(mat2.sizes())));
  }
  check_multipliable(self, mat2, "bmm");
  return {OutputSpec{{self.size(0), self.size(1), mat2.size(2)}, self.dtype(), device}};
}

namespace {

// addmm and _addmm_activation: out [n, p] = beta * self + alpha * (mat1 [n, m] @ mat2 [m, p]);
// self arrives expanded to [n, p] (stride 0 along broadcast dims).
std::array<OutputSpec, 1> addmm_like(const char* op, Tensor& self, Tensor& mat1, Tensor& mat2) {
  const Device device = support::common_device({&self, &mat1, &mat2});
  check_rank(mat1, 2, op, "mat1");
  check_rank(mat2, 2, op, "mat2");
  check_same_dtype(mat1, mat2, op, "mat1", "mat2");
  check_same_dtype(self, mat1, op, "self", "mat1");
  check_multipliable(mat1, mat2, op);
  DimVector shape{mat1.size(0), mat2.size(1)};
  if (!detail::is_expandable_to(self.sizes(), shape)) {
    throw Error(fmt::format("{}: self of shape {} cannot be broadcast to the product's shape {}",
                            op, detail::format_shape(self.sizes()), detail::format_shape(shape)));
  }
  support::prepare_input(self, self.dtype(), shape, device);
  return {OutputSpec{std::move(shape), mat1.dtype(), device}};
}

}  // namespace

std::array<OutputSpec, 1> addmm_out(Tensor& self, Tensor& mat1, Tensor& mat2,
                                    const Scalar& /*beta*/, const Scalar& /*alpha*/) {
  return addmm_like("addmm", self, mat1, mat2);
}

// _addmm_activation: addmm's rules (ops.yaml lets it take floating dtypes only: ReLU and GELU
// of integers are not defined the same way everywhere).
std::array<OutputSpec, 1> _addmm_activation_out(Tensor& self, Tensor& mat1, Tensor& mat2,
                                                const Scalar& /*beta*/, const Scalar& /*alpha*/,
                                                bool /*use_gelu*/) {
  return addmm_like("_addmm_activation", self, mat1, mat2);
}

}  // namespace bp::meta
