// The elementwise ops: add, sub, mul, div, maximum, minimum; eq, lt, gt; where; neg, abs, exp,
// log, sqrt, tanh, sigmoid, relu, gelu and silu; the gradients of relu and gelu
// (threshold_backward, gelu_backward). The core's meta step has broadcast the inputs
// to out's shape and converted them to one dtype, so each op is one kernel of
// kernels/elementwise.cl over operands of one shape; a table entry says which.
#include "OpenCLNativeFunctions.h"

#include "kernels/scalar_args.h"
#include "runtime/kernel_launch.h"

#include <algorithm>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace bp::opencl {
namespace {

namespace kernel_dtypes = plugin::kernel_dtypes;
using plugin::require_dtype_of;

struct ElementwiseOp {
  const char* name;                 // for messages: "add"
  const char* kernel;               // in elementwise.cl
  void (*require_declared)(DType);  // refuses the dtypes ops.yaml does not declare for the op
  DenseVectors vectors = DenseVectors::No;  // Yes for MATH_KERNELs
};

constexpr ElementwiseOp kAdd{"add", "add", &require_dtype_of<kernel_dtypes::add_out>};
constexpr ElementwiseOp kSub{"sub", "sub", &require_dtype_of<kernel_dtypes::sub_out>};
constexpr ElementwiseOp kMul{"mul", "mul", &require_dtype_of<kernel_dtypes::mul_out>};
constexpr ElementwiseOp kDiv{"div", "div", &require_dtype_of<kernel_dtypes::div_out>};
constexpr ElementwiseOp kMaximum{"maximum", "maximum",
                                 &require_dtype_of<kernel_dtypes::maximum_out>};
constexpr ElementwiseOp kMinimum{"minimum", "minimum",
                                 &require_dtype_of<kernel_dtypes::minimum_out>};

constexpr ElementwiseOp kNeg{"neg", "neg", &require_dtype_of<kernel_dtypes::neg_out>};
constexpr ElementwiseOp kAbs{"abs", "abs_", &require_dtype_of<kernel_dtypes::abs_out>};
constexpr ElementwiseOp kExp{"exp", "exp_", &require_dtype_of<kernel_dtypes::exp_out>,
                             DenseVectors::Yes};
constexpr ElementwiseOp kLog{"log", "log_", &require_dtype_of<kernel_dtypes::log_out>,
                             DenseVectors::Yes};
constexpr ElementwiseOp kSqrt{"sqrt", "sqrt_", &require_dtype_of<kernel_dtypes::sqrt_out>,
                              DenseVectors::Yes};
constexpr ElementwiseOp kTanh{"tanh", "tanh_", &require_dtype_of<kernel_dtypes::tanh_out>,
                              DenseVectors::Yes};
constexpr ElementwiseOp kSigmoid{"sigmoid", "sigmoid",
                                 &require_dtype_of<kernel_dtypes::sigmoid_out>, DenseVectors::Yes};
constexpr ElementwiseOp kSilu{"silu", "silu", &require_dtype_of<kernel_dtypes::silu_out>,
                              DenseVectors::Yes};
constexpr ElementwiseOp kRelu{"relu", "relu", &require_dtype_of<kernel_dtypes::relu_out>};
constexpr ElementwiseOp kGeluErf{"gelu", "gelu_erf", &require_dtype_of<kernel_dtypes::gelu_out>,
                                 DenseVectors::Yes};
constexpr ElementwiseOp kGeluTanh{"gelu", "gelu_tanh", &require_dtype_of<kernel_dtypes::gelu_out>,
                                  DenseVectors::Yes};

constexpr ElementwiseOp kThresholdBackward{
    "threshold_backward", "threshold_backward",
    &require_dtype_of<kernel_dtypes::threshold_backward_grad_input>};
constexpr ElementwiseOp kGeluErfBackward{
    "gelu_backward", "gelu_erf_backward",
    &require_dtype_of<kernel_dtypes::gelu_backward_grad_input>};
constexpr ElementwiseOp kGeluTanhBackward{
    "gelu_backward", "gelu_tanh_backward",
    &require_dtype_of<kernel_dtypes::gelu_backward_grad_input>};

constexpr ElementwiseOp kEq{"eq", "eq", &require_dtype_of<kernel_dtypes::eq_Tensor_out>};
constexpr ElementwiseOp kLt{"lt", "lt", &require_dtype_of<kernel_dtypes::lt_Tensor_out>};
constexpr ElementwiseOp kGt{"gt", "gt", &require_dtype_of<kernel_dtypes::gt_Tensor_out>};
constexpr ElementwiseOp kWhere{"where", "where_", &require_dtype_of<kernel_dtypes::where_self_out>};

// out = op(inputs...) for inputs of `dtype` (the program's, and the dtype of the argument ops.yaml
// declares), each of out's shape; `scalar`, if any, is the kernel's last argument.
void run(const ElementwiseOp& op, DType dtype, const TensorView& out,
         std::initializer_list<const TensorView*> inputs, std::optional<ScalarArg> scalar = {}) {
  Device& device = device_of(out);
  op.require_declared(dtype);
  device.require_double_precision_for(op.name, dtype);
  std::vector<Operand> operands{operand_of(out)};
  for (const TensorView* input : inputs) {
    plugin::check(std::ranges::equal(input->sizes(), out.sizes()),
                  std::string(op.name) + ": the inputs do not have the output's shape");
    operands.push_back(operand_of(*input));
  }
  KernelArgs tail;
  if (scalar) tail.add(*scalar);
  launch_elementwise(device, device.program(KernelSource::Elementwise, dtype), op.kernel, op.name,
                     out.sizes(), operands, tail, ElementIndex::Unused, op.vectors);
}

// Arithmetic on two tensors of out's dtype; alpha scales `other` where the kernel uses it.
void binary(const ElementwiseOp& op, const TensorView& self, const TensorView& other,
            const Scalar& alpha, const TensorView& out) {
  require_dtype(op.name, "self", self, out.dtype());
  require_dtype(op.name, "other", other, out.dtype());
  run(op, out.dtype(), out, {&self, &other}, compute_scalar(out.dtype(), alpha));
}

void unary(const ElementwiseOp& op, const TensorView& self, const TensorView& out) {
  require_dtype(op.name, "self", self, out.dtype());
  run(op, out.dtype(), out, {&self});
}

// grad_input = grad_output times the derivative at self of the function op is the gradient of;
// `parameter` is the function's scalar where it has one (threshold_backward's threshold).
void gradient(const ElementwiseOp& op, const TensorView& grad_output, const TensorView& self,
              const Scalar& parameter, const TensorView& grad_input) {
  require_dtype(op.name, "grad_output", grad_output, grad_input.dtype());
  require_dtype(op.name, "self", self, grad_input.dtype());
  run(op, grad_input.dtype(), grad_input, {&grad_output, &self},
      compute_scalar(grad_input.dtype(), parameter));
}

void compare(const ElementwiseOp& op, const TensorView& self, const TensorView& other,
             const TensorView& out) {
  require_dtype(op.name, "other", other, self.dtype());
  require_dtype(op.name, "out", out, DType::Bool);
  run(op, self.dtype(), out, {&self, &other});
}

}  // namespace

void add_out(const TensorView& self, const TensorView& other, const Scalar& alpha,
             const TensorView& out) {
  binary(kAdd, self, other, alpha, out);
}

void sub_out(const TensorView& self, const TensorView& other, const Scalar& alpha,
             const TensorView& out) {
  binary(kSub, self, other, alpha, out);
}

void mul_out(const TensorView& self, const TensorView& other, const TensorView& out) {
  binary(kMul, self, other, 1, out);
}

void div_out(const TensorView& self, const TensorView& other, const TensorView& out) {
  binary(kDiv, self, other, 1, out);
}

void maximum_out(const TensorView& self, const TensorView& other, const TensorView& out) {
  binary(kMaximum, self, other, 1, out);
}

void minimum_out(const TensorView& self, const TensorView& other, const TensorView& out) {
  binary(kMinimum, self, other, 1, out);
}

void eq_Tensor_out(const TensorView& self, const TensorView& other, const TensorView& out) {
  compare(kEq, self, other, out);
}

void lt_Tensor_out(const TensorView& self, const TensorView& other, const TensorView& out) {
  compare(kLt, self, other, out);
}

void gt_Tensor_out(const TensorView& self, const TensorView& other, const TensorView& out) {
  compare(kGt, self, other, out);
}

void where_self_out(const TensorView& condition, const TensorView& self, const TensorView& other,
                    const TensorView& out) {
  require_dtype("where", "condition", condition, DType::Bool);
  require_dtype("where", "self", self, out.dtype());
  require_dtype("where", "other", other, out.dtype());
  run(kWhere, out.dtype(), out, {&condition, &self, &other});
}

void neg_out(const TensorView& self, const TensorView& out) { unary(kNeg, self, out); }
void abs_out(const TensorView& self, const TensorView& out) { unary(kAbs, self, out); }
void exp_out(const TensorView& self, const TensorView& out) { unary(kExp, self, out); }
void log_out(const TensorView& self, const TensorView& out) { unary(kLog, self, out); }
void sqrt_out(const TensorView& self, const TensorView& out) { unary(kSqrt, self, out); }
void tanh_out(const TensorView& self, const TensorView& out) { unary(kTanh, self, out); }
void sigmoid_out(const TensorView& self, const TensorView& out) { unary(kSigmoid, self, out); }
void relu_out(const TensorView& self, const TensorView& out) { unary(kRelu, self, out); }
void silu_out(const TensorView& self, const TensorView& out) { unary(kSilu, self, out); }

void gelu_out(const TensorView& self, std::string_view approximate, const TensorView& out) {
  if (approximate == "none") return unary(kGeluErf, self, out);
  if (approximate == "tanh") return unary(kGeluTanh, self, out);
  throw plugin::Error(BP_STATUS_INVALID_ARGUMENT,
                      "gelu: approximate must be 'none' or 'tanh', got '" +
                          std::string(approximate) + "'");
}

void threshold_backward_grad_input(const TensorView& grad_output, const TensorView& self,
                                   const Scalar& threshold, const TensorView& grad_input) {
  gradient(kThresholdBackward, grad_output, self, threshold, grad_input);
}

void gelu_backward_grad_input(const TensorView& grad_output, const TensorView& self,
                              std::string_view approximate, const TensorView& grad_input) {
  if (approximate == "none") return gradient(kGeluErfBackward, grad_output, self, 0, grad_input);
  if (approximate == "tanh") return gradient(kGeluTanhBackward, grad_output, self, 0, grad_input);
  throw plugin::Error(BP_STATUS_INVALID_ARGUMENT,
                      "gelu_backward: approximate must be 'none' or 'tanh', got '" +
                          std::string(approximate) + "'");
}

}  // namespace bp::opencl
