// Elementwise ops: arithmetic (add, sub, mul, div, maximum, minimum), comparisons (eq, lt, gt),
// where, functions of one tensor (neg, abs, exp, log, sqrt, tanh, sigmoid, relu, gelu,
// silu), and the gradients of gelu and relu (gelu_backward, threshold_backward). The core's
// meta step has broadcast the inputs to out's shape and converted them to one dtype, so each op
// is one kernel over operands of one shape (kernels/binary.cu, unary.cu, compare.cu,
// activation_gradients.cu).
#include "CUDANativeFunctions.h"

#include "runtime/tensor_access.h"

#include <algorithm>
#include <limits>
#include <string>

namespace bp::cuda {
namespace {

void require_shape(std::string_view op, const TensorView& input, const TensorView& out) {
  plugin::check(std::ranges::equal(input.sizes(), out.sizes()),
                std::string(op) + ": the inputs do not have the output's shape");
}

void binary(BinaryOp op, std::string_view name, const TensorView& self, const TensorView& other,
            const Scalar& alpha, const TensorView& out) {
  require_dtype(name, "self", self, out.dtype());
  require_dtype(name, "other", other, out.dtype());
  require_shape(name, self, out);
  require_shape(name, other, out);
  const OnDevice on(out);
  for_each_launch<3>(
      on.device(), out.sizes(), {operand_of(out), operand_of(self), operand_of(other)},
      [&](const ElementwiseLaunch<3>& launch) { launch_binary(op, out.dtype(), launch, alpha); });
}

void unary(UnaryOp op, std::string_view name, const TensorView& self, const TensorView& out) {
  require_dtype(name, "self", self, out.dtype());
  require_shape(name, self, out);
  const OnDevice on(out);
  for_each_launch<2>(
      on.device(), out.sizes(), {operand_of(out), operand_of(self)},
      [&](const ElementwiseLaunch<2>& launch) { launch_unary(op, out.dtype(), launch); });
}

void compare(CompareOp op, std::string_view name, const TensorView& self, const TensorView& other,
             const TensorView& out) {
  require_dtype(name, "other", other, self.dtype());
  require_dtype(name, "out", out, DType::Bool);
  require_shape(name, self, out);
  require_shape(name, other, out);
  const OnDevice on(out);
  for_each_launch<3>(
      on.device(), out.sizes(), {operand_of(out), operand_of(self), operand_of(other)},
      [&](const ElementwiseLaunch<3>& launch) { launch_compare(op, self.dtype(), launch); });
}

// -alpha for `dtype`, so that self - alpha * other runs as self + (-alpha) * other: the same value
// for every dtype (integers wrap alike; negating a float is exact). The most negative int64 has
// no int64 negation: for integer dtypes it stays as it is, which wraps to the same products; for
// floating ones it becomes +2^63.
Scalar negated(const Scalar& alpha, DType dtype) {
  if (alpha.is_floating_point()) return Scalar(-alpha.to<double>());
  const int64_t value = alpha.to<int64_t>();
  if (value != std::numeric_limits<int64_t>::min()) return Scalar(-value);
  return is_floating_point(dtype) ? Scalar(-static_cast<double>(value)) : Scalar(value);
}

}  // namespace

void add_out(const TensorView& self, const TensorView& other, const Scalar& alpha,
             const TensorView& out) {
  binary(BinaryOp::Add, "add", self, other, alpha, out);
}

void sub_out(const TensorView& self, const TensorView& other, const Scalar& alpha,
             const TensorView& out) {
  binary(BinaryOp::Sub, "sub", self, other, negated(alpha, out.dtype()), out);
}

void mul_out(const TensorView& self, const TensorView& other, const TensorView& out) {
  binary(BinaryOp::Mul, "mul", self, other, 1, out);
}

void div_out(const TensorView& self, const TensorView& other, const TensorView& out) {
  binary(BinaryOp::Div, "div", self, other, 1, out);
}

void maximum_out(const TensorView& self, const TensorView& other, const TensorView& out) {
  binary(BinaryOp::Maximum, "maximum", self, other, 1, out);
}

void minimum_out(const TensorView& self, const TensorView& other, const TensorView& out) {
  binary(BinaryOp::Minimum, "minimum", self, other, 1, out);
}

void eq_Tensor_out(const TensorView& self, const TensorView& other, const TensorView& out) {
  compare(CompareOp::Eq, "eq", self, other, out);
}

void lt_Tensor_out(const TensorView& self, const TensorView& other, const TensorView& out) {
  compare(CompareOp::Lt, "lt", self, other, out);
}

void gt_Tensor_out(const TensorView& self, const TensorView& other, const TensorView& out) {
  compare(CompareOp::Gt, "gt", self, other, out);
}

void where_self_out(const TensorView& condition, const TensorView& self, const TensorView& other,
                    const TensorView& out) {
  require_dtype("where", "condition", condition, DType::Bool);
  require_dtype("where", "self", self, out.dtype());
  require_dtype("where", "other", other, out.dtype());
  for (const TensorView* input : {&condition, &self, &other}) require_shape("where", *input, out);
  const OnDevice on(out);
  for_each_launch<4>(
      on.device(), out.sizes(),
      {operand_of(out), operand_of(condition), operand_of(self), operand_of(other)},
      [&](const ElementwiseLaunch<4>& launch) { launch_where(element_size(out.dtype()), launch); });
}

void neg_out(const TensorView& self, const TensorView& out) {
  unary(UnaryOp::Neg, "neg", self, out);
}
void abs_out(const TensorView& self, const TensorView& out) {
  unary(UnaryOp::Abs, "abs", self, out);
}
void exp_out(const TensorView& self, const TensorView& out) {
  unary(UnaryOp::Exp, "exp", self, out);
}
void log_out(const TensorView& self, const TensorView& out) {
  unary(UnaryOp::Log, "log", self, out);
}
void sqrt_out(const TensorView& self, const TensorView& out) {
  unary(UnaryOp::Sqrt, "sqrt", self, out);
}
void tanh_out(const TensorView& self, const TensorView& out) {
  unary(UnaryOp::Tanh, "tanh", self, out);
}
void sigmoid_out(const TensorView& self, const TensorView& out) {
  unary(UnaryOp::Sigmoid, "sigmoid", self, out);
}
void relu_out(const TensorView& self, const TensorView& out) {
  unary(UnaryOp::Relu, "relu", self, out);
}
void silu_out(const TensorView& self, const TensorView& out) {
  unary(UnaryOp::Silu, "silu", self, out);
}

void gelu_out(const TensorView& self, std::string_view approximate, const TensorView& out) {
  if (approximate == "none") return unary(UnaryOp::GeluErf, "gelu", self, out);
  if (approximate == "tanh") return unary(UnaryOp::GeluTanh, "gelu", self, out);
  throw plugin::Error(BP_STATUS_INVALID_ARGUMENT,
                      "gelu: approximate must be 'none' or 'tanh', got '" +
                          std::string(approximate) + "'");
}

namespace {

// grad_input = grad_output * the activation's derivative at self, elementwise; the meta step has
// broadcast both inputs to grad_input's shape and given them its dtype.
void activation_gradient(ActivationGradient kind, std::string_view name,
                         const TensorView& grad_output, const TensorView& self, double threshold,
                         const TensorView& grad_input) {
  require_dtype(name, "grad_output", grad_output, grad_input.dtype());
  require_dtype(name, "self", self, grad_input.dtype());
  require_shape(name, grad_output, grad_input);
  require_shape(name, self, grad_input);
  const OnDevice on(grad_input);
  for_each_launch<3>(on.device(), grad_input.sizes(),
                     {operand_of(grad_input), operand_of(grad_output), operand_of(self)},
                     [&](const ElementwiseLaunch<3>& launch) {
                       launch_activation_gradient(kind, grad_input.dtype(), launch, threshold);
                     });
}

}  // namespace

void gelu_backward_grad_input(const TensorView& grad_output, const TensorView& self,
                              std::string_view approximate, const TensorView& grad_input) {
  constexpr std::string_view op = "gelu_backward";
  if (approximate == "none") {
    return activation_gradient(ActivationGradient::GeluErf, op, grad_output, self, 0, grad_input);
  }
  if (approximate == "tanh") {
    return activation_gradient(ActivationGradient::GeluTanh, op, grad_output, self, 0, grad_input);
  }
  throw plugin::Error(BP_STATUS_INVALID_ARGUMENT,
                      "gelu_backward: approximate must be 'none' or 'tanh', got '" +
                          std::string(approximate) + "'");
}

void threshold_backward_grad_input(const TensorView& grad_output, const TensorView& self,
                                   const Scalar& threshold, const TensorView& grad_input) {
  activation_gradient(ActivationGradient::Threshold, "threshold_backward", grad_output, self,
                      threshold.to<double>(), grad_input);
}

}  // namespace bp::cuda
