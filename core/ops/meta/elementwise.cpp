// Meta functions of the elementwise ops. Unless a comment says otherwise, the kernel may
// assume: every input has the output's shape (broadcast dims are views with stride 0) and the
// dtype stated below; all tensors are on one device; the output is contiguous.
#include "meta_support.h"

#include <core_generated/MetaFunctions.h>

#include <fmt/format.h>

namespace bp::meta {
namespace {

using support::broadcast_shape;
using support::common_device;
using support::elementwise_device;
using support::prepare_input;

// The dtype a binary op computes in (both inputs get it) and the dtype of its output, given
// the promoted dtype of its inputs.
struct BinaryDtypes {
  DType compute;
  DType out;
};

// Converts both inputs to the compute dtype and broadcasts them to the output's shape.
std::array<OutputSpec, 1> promote_and_broadcast(Tensor& self, Tensor& other, BinaryDtypes dtypes) {
  const Device device = elementwise_device({&self, &other});
  DimVector shape = broadcast_shape({&self, &other});
  prepare_input(self, dtypes.compute, shape, device);
  prepare_input(other, dtypes.compute, shape, device);
  return {OutputSpec{std::move(shape), dtypes.out, device}};
}

// A binary op's output; `dtypes_for(promoted)` gives the op's BinaryDtypes and checks the op's
// own rules. Inputs that are alike (support::alike) and already of the compute dtype, the
// common case, are what the kernel wants as they are.
template <typename DtypesFor>
std::array<OutputSpec, 1> binary_output(Tensor& self, Tensor& other, DtypesFor&& dtypes_for) {
  if (support::alike(self, other)) {
    const BinaryDtypes dtypes = dtypes_for(self.dtype());
    if (self.dtype() == dtypes.compute) {
      return {OutputSpec{self.sizes(), dtypes.out, self.device()}};
    }
    return promote_and_broadcast(self, other, dtypes);
  }
  return promote_and_broadcast(self, other, dtypes_for(detail::result_type({self, other})));
}

// PyTorch's alpha_check: alpha may not widen the result's category.
void check_alpha(DType result, const Scalar& alpha) {
  if (alpha.is_bool() && result != kBool) {
    throw Error(fmt::format("a Bool alpha is only supported for Bool results; the result is {}",
                            dtype_name(result)));
  }
  if (!is_floating_point(result) && alpha.is_floating_point()) {
    throw Error(
        fmt::format("for integral inputs (the result is {}), alpha must not be a "
                    "floating-point number",
                    dtype_name(result)));
  }
}

}  // namespace

// add: self, other and out share PyTorch's promoted dtype; out = self + alpha * other, with
// alpha of the result's category (alpha_check).
std::array<OutputSpec, 1> binary_with_alpha(Tensor& self, Tensor& other, const Scalar& alpha) {
  return binary_output(self, other, [&](DType promoted) {
    check_alpha(promoted, alpha);
    return BinaryDtypes{promoted, promoted};
  });
}

// sub: as binary_with_alpha, and no input is Bool, so the kernel never subtracts bools.
std::array<OutputSpec, 1> binary_subtraction(Tensor& self, Tensor& other, const Scalar& alpha) {
  if (self.defined() && other.defined() && (self.dtype() == kBool || other.dtype() == kBool)) {
    throw Error(
        "subtraction with a Bool tensor is not supported, as in PyTorch; convert it "
        "first with .to(bp::kInt64), or to invert a mask use bp::eq(mask, false)");
  }
  return binary_with_alpha(self, other, alpha);
}

// mul, maximum, minimum: self, other and out share PyTorch's promoted dtype (Bool included).
std::array<OutputSpec, 1> binary(Tensor& self, Tensor& other) {
  return binary_output(self, other, [](DType promoted) {
    return BinaryDtypes{promoted, promoted};
  });
}

// div: true division. The promoted dtype, or Float32 when that is an integer or Bool type;
// self, other and out all have it, so the kernel always divides floating-point numbers.
std::array<OutputSpec, 1> binary_true_division(Tensor& self, Tensor& other) {
  return binary_output(self, other, [](DType promoted) {
    const DType dtype = is_floating_point(promoted) ? promoted : kFloat32;
    return BinaryDtypes{dtype, dtype};
  });
}

// eq, lt, gt: self and other have their promoted dtype; out is Bool.
std::array<OutputSpec, 1> comparison(Tensor& self, Tensor& other) {
  return binary_output(self, other, [](DType promoted) { return BinaryDtypes{promoted, kBool}; });
}

// where: condition is Bool; self, other and out have the promoted dtype of self and other; all
// three inputs have the output's shape.
std::array<OutputSpec, 1> where_self_out(Tensor& condition, Tensor& self, Tensor& other) {
  const Device device = elementwise_device({&condition, &self, &other});
  if (condition.dtype() != kBool) {
    throw Error(
        fmt::format("where: expected condition to be a Bool tensor, got {}; compare "
                    "first (bp::gt(x, 0)) or convert with .to(bp::kBool)",
                    dtype_name(condition.dtype())));
  }
  const DType dtype = detail::result_type({self, other});
  DimVector shape = broadcast_shape({&condition, &self, &other});
  prepare_input(condition, kBool, shape, device);
  prepare_input(self, dtype, shape, device);
  prepare_input(other, dtype, shape, device);
  return {OutputSpec{std::move(shape), dtype, device}};
}

// abs, neg, relu: out has self's shape and dtype.
std::array<OutputSpec, 1> unary(Tensor& self) {
  const Device device = common_device({&self});
  return {OutputSpec{DimVector(self.sizes()), self.dtype(), device}};
}

// exp, log, sqrt, tanh, sigmoid: self and out are floating point: self's dtype when it is,
// else Float32 (integer and Bool inputs are converted, as PyTorch promotes them).
std::array<OutputSpec, 1> unary_float(Tensor& self) {
  const Device device = common_device({&self});
  const DType dtype = is_floating_point(self.dtype()) ? self.dtype() : kFloat32;
  if (self.dtype() != dtype) self = self.to(dtype);
  return {OutputSpec{DimVector(self.sizes()), dtype, device}};
}

// gelu: self and out share self's dtype; approximate is "none" or "tanh".
std::array<OutputSpec, 1> gelu_out(Tensor& self, std::string_view approximate) {
  const Device device = common_device({&self});
  if (approximate != "none" && approximate != "tanh") {
    throw Error(fmt::format("gelu: approximate must be 'none' or 'tanh', got '{}'", approximate));
  }
  return {OutputSpec{DimVector(self.sizes()), self.dtype(), device}};
}

namespace {

// An elementwise gradient: grad_output and self broadcast to one shape and share their promoted
// dtype (floating, as ops.yaml states), which grad_input has.
std::array<OutputSpec, 1> pointwise_backward(Tensor& grad_output, Tensor& self) {
  if (support::alike(grad_output, self)) {
    return {OutputSpec{grad_output.sizes(), grad_output.dtype(), grad_output.device()}};
  }
  const DType dtype = detail::result_type({grad_output, self});
  return promote_and_broadcast(grad_output, self, {dtype, dtype});
}

}  // namespace

// gelu_backward: as pointwise_backward; approximate is "none" or "tanh", as gelu's.
std::array<OutputSpec, 1> gelu_backward_grad_input(Tensor& grad_output, Tensor& self,
                                                   std::string_view approximate) {
  if (approximate != "none" && approximate != "tanh") {
    throw Error(fmt::format("gelu_backward: approximate must be 'none' or 'tanh', got '{}'",
                            approximate));
  }
  return pointwise_backward(grad_output, self);
}

// threshold_backward: as pointwise_backward; threshold is any number.
std::array<OutputSpec, 1> threshold_backward_grad_input(Tensor& grad_output, Tensor& self,
                                                        const Scalar& /*threshold*/) {
  return pointwise_backward(grad_output, self);
}

}  // namespace bp::meta
