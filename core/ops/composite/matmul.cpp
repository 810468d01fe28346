// matmul with PyTorch's semantics, over mm, bmm and views.
#include <backplane/backplane.h>

#include <core_generated/CompositeFunctions.h>

#include "tensor/shape.h"

#include <fmt/format.h>

namespace bp::composite {
namespace {

DimVector leading_dims(const Tensor& t, int64_t count) {
  return DimVector(IntArrayRef(t.sizes().data(), static_cast<size_t>(count)));
}

// Both operands carry batch dims, or one of them is 1-D or 2-D under a batched other: broadcast
// the batch dims, flatten them into one and run bmm.
Tensor batched_matmul(const Tensor& self, const Tensor& other) {
  const int64_t dim1 = self.dim();
  const int64_t dim2 = other.dim();
  const int64_t n = dim1 > 1 ? self.size(-2) : 1;
  const int64_t m = self.size(-1);
  const int64_t p = dim2 > 1 ? other.size(-1) : 1;
  DimVector batch;
  try {
    batch = detail::broadcast_shapes(leading_dims(self, std::max<int64_t>(dim1 - 2, 0)),
                                     leading_dims(other, std::max<int64_t>(dim2 - 2, 0)));
  } catch (const Error& e) {
    throw Error(fmt::format(
        "matmul: the batch dims of self (shape {}) and other (shape {}) do "
        "not broadcast: {}",
        detail::format_shape(self.sizes()), detail::format_shape(other.sizes()), e.what()));
  }
  const int64_t batch_count = detail::checked_numel(batch, "matmul");

  DimVector lhs_shape = batch;
  lhs_shape.push_back(n);
  lhs_shape.push_back(m);
  DimVector rhs_shape = batch;
  rhs_shape.push_back(m);
  rhs_shape.push_back(p);
  const Tensor lhs =
      (dim1 == 1 ? self.unsqueeze(0) : self).expand(lhs_shape).reshape({batch_count, n, m});
  const Tensor rhs =
      (dim2 == 1 ? other.unsqueeze(1) : other).expand(rhs_shape).reshape({batch_count, m, p});

  DimVector out_shape = batch;
  if (dim1 > 1) out_shape.push_back(n);
  if (dim2 > 1) out_shape.push_back(p);
  return bmm(lhs, rhs).view(out_shape);
}

}  // namespace

Tensor matmul(const Tensor& self, const Tensor& other) {
  if (!self.defined() || !other.defined()) {
    throw Error("matmul: an argument is an undefined tensor (a default-constructed bp::Tensor)");
  }
  const int64_t dim1 = self.dim();
  const int64_t dim2 = other.dim();
  if (dim1 == 0 || dim2 == 0) {
    throw Error(
        fmt::format("matmul: both arguments need at least 1 dim, but they are {}-D and "
                    "{}-D",
                    dim1, dim2));
  }
  const int64_t inner_self = self.size(-1);
  const int64_t inner_other = dim2 == 1 ? other.size(0) : other.size(-2);
  if (inner_self != inner_other) {
    throw Error(
        fmt::format("matmul: self of shape {} and other of shape {} cannot be multiplied: "
                    "the last dim of self ({}) must equal the {} of other ({})",
                    detail::format_shape(self.sizes()), detail::format_shape(other.sizes()),
                    inner_self, dim2 == 1 ? "size" : "second-to-last dim", inner_other));
  }

  if (dim1 == 1 && dim2 == 1) return mm(self.unsqueeze(0), other.unsqueeze(1)).reshape({});
  if (dim1 == 2 && dim2 == 1) return mm(self, other.unsqueeze(1)).squeeze(1);
  if (dim1 == 1 && dim2 == 2) return mm(self.unsqueeze(0), other).squeeze(0);
  if (dim1 == 2 && dim2 == 2) return mm(self, other);
  if (dim1 >= 3 && dim2 <= 2) {
    // Fold self's batch dims into its rows: one mm instead of a batched product.
    DimVector out_shape = leading_dims(self, dim1 - 1);
    const int64_t rows = detail::checked_numel(out_shape, "matmul");
    const Tensor product =
        mm(self.reshape({rows, inner_self}), dim2 == 1 ? other.unsqueeze(1) : other);
    if (dim2 == 2) out_shape.push_back(other.size(1));
    return product.view(out_shape);
  }
  return batched_matmul(self, other);
}

}  // namespace bp::composite
