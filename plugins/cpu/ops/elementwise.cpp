// Elementwise ops: arithmetic on two tensors (add, sub, mul, div, maximum, minimum), functions
// of one tensor (neg, abs, exp, log, sqrt, tanh, sigmoid, silu, relu, gelu), the gradients of
// relu and gelu (threshold_backward, gelu_backward), comparisons with Bool results (eq, lt, gt)
// and where. The core's meta step has broadcast the inputs to out's
// shape and given them out's dtype (a floating one for the transcendental functions; the
// compared inputs one dtype of their own), so every kernel is one loop. Integer arithmetic wraps
// around (backplane/sdk/wrapping_arithmetic.hpp).
#include "CPUNativeFunctions.h"

#include "kernels/activations.h"
#include "kernels/nan_propagation.h"
#include "kernels/parallel_elements.h"
#include "kernels/transcendental.h"

#include <backplane/sdk/wrapping_arithmetic.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

namespace bp::cpu {
namespace {

using plugin::wrapping;

// out = fn(self, other) elementwise for the dtypes Kernel takes; fn takes and returns the
// compute type.
template <typename Kernel, typename Fn>
void binary_op(std::string_view op, const TensorView& self, const TensorView& other,
               const TensorView& out, Fn&& fn) {
  require_dtype(op, "self", self, out.dtype());
  require_dtype(op, "other", other, out.dtype());
  plugin::visit_dtype<Kernel>(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    parallel_map_elements(out.sizes(), fn, output_operand<T>(out), input_operand<T>(self),
                          input_operand<T>(other));
  });
}

// out = fn(self, alpha, other) elementwise for the dtypes Kernel takes, with alpha converted to
// the compute type once per call.
template <typename Kernel, typename Fn>
void binary_op_with_alpha(std::string_view op, const TensorView& self, const TensorView& other,
                          const bp::Scalar& alpha, const TensorView& out, Fn&& fn) {
  require_dtype(op, "self", self, out.dtype());
  require_dtype(op, "other", other, out.dtype());
  plugin::visit_dtype<Kernel>(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const auto scale = alpha.to<compute_t<T>>();
    parallel_map_elements(
        out.sizes(), [scale, &fn](auto x, auto y) { return fn(x, scale, y); },
        output_operand<T>(out), input_operand<T>(self), input_operand<T>(other));
  });
}

}  // namespace

void add_out(const TensorView& self, const TensorView& other, const bp::Scalar& alpha,
             const TensorView& out) {
  binary_op_with_alpha<kernel_dtypes::add_out>(
      "add", self, other, alpha, out, [](auto x, auto a, auto y) {
        return wrapping(std::plus{}, x, wrapping(std::multiplies{}, a, y));
      });
}

void sub_out(const TensorView& self, const TensorView& other, const bp::Scalar& alpha,
             const TensorView& out) {
  binary_op_with_alpha<kernel_dtypes::sub_out>(
      "sub", self, other, alpha, out, [](auto x, auto a, auto y) {
        return wrapping(std::minus{}, x, wrapping(std::multiplies{}, a, y));
      });
}

void mul_out(const TensorView& self, const TensorView& other, const TensorView& out) {
  binary_op<kernel_dtypes::mul_out>(
      "mul", self, other, out, [](auto x, auto y) { return wrapping(std::multiplies{}, x, y); });
}

// True division: the meta step promotes integer inputs to a floating dtype.
void div_out(const TensorView& self, const TensorView& other, const TensorView& out) {
  binary_op<kernel_dtypes::div_out>("div", self, other, out, [](auto x, auto y) { return x / y; });
}

void maximum_out(const TensorView& self, const TensorView& other, const TensorView& out) {
  binary_op<kernel_dtypes::maximum_out>("maximum", self, other, out,
                                        [](auto x, auto y) { return max_propagating_nan(x, y); });
}

void minimum_out(const TensorView& self, const TensorView& other, const TensorView& out) {
  binary_op<kernel_dtypes::minimum_out>("minimum", self, other, out,
                                        [](auto x, auto y) { return min_propagating_nan(x, y); });
}

namespace {

// out = fn(self) elementwise for the dtypes Kernel takes; fn takes and returns the compute type.
template <typename Kernel, typename Fn>
void unary_op(std::string_view op, const TensorView& self, const TensorView& out, Fn&& fn) {
  require_dtype(op, "self", self, out.dtype());
  plugin::visit_dtype<Kernel>(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    parallel_map_elements(out.sizes(), fn, output_operand<T>(out), input_operand<T>(self));
  });
}

template <typename C>
C absolute(C x) {
  if constexpr (std::is_floating_point_v<C>) {
    return std::abs(x);  // also turns -0.0 into 0.0
  } else if constexpr (std::is_signed_v<C>) {
    return x < 0 ? static_cast<C>(-x) : x;
  } else {
    return x;  // unsigned and bool
  }
}

}  // namespace

void neg_out(const TensorView& self, const TensorView& out) {
  unary_op<kernel_dtypes::neg_out>("neg", self, out, [](auto x) { return -x; });
}

void abs_out(const TensorView& self, const TensorView& out) {
  unary_op<kernel_dtypes::abs_out>("abs", self, out, [](auto x) { return absolute(x); });
}

void exp_out(const TensorView& self, const TensorView& out) {
  unary_op<kernel_dtypes::exp_out>("exp", self, out, [](auto x) { return exp_of(x); });
}

void log_out(const TensorView& self, const TensorView& out) {
  unary_op<kernel_dtypes::log_out>("log", self, out, [](auto x) { return log_of(x); });
}

void sqrt_out(const TensorView& self, const TensorView& out) {
  unary_op<kernel_dtypes::sqrt_out>("sqrt", self, out, [](auto x) { return std::sqrt(x); });
}

void tanh_out(const TensorView& self, const TensorView& out) {
  unary_op<kernel_dtypes::tanh_out>("tanh", self, out, [](auto x) { return tanh_of(x); });
}

void sigmoid_out(const TensorView& self, const TensorView& out) {
  unary_op<kernel_dtypes::sigmoid_out>(
      "sigmoid", self, out, [](auto x) { return decltype(x)(1) / (decltype(x)(1) + exp_of(-x)); });
}

// x * sigmoid(x), as x / (1 + e^-x).
void silu_out(const TensorView& self, const TensorView& out) {
  unary_op<kernel_dtypes::silu_out>("silu", self, out,
                                    [](auto x) { return x / (decltype(x)(1) + exp_of(-x)); });
}

void relu_out(const TensorView& self, const TensorView& out) {
  unary_op<kernel_dtypes::relu_out>("relu", self, out, [](auto x) { return relu_of(x); });
}

void gelu_out(const TensorView& self, std::string_view approximate, const TensorView& out) {
  if (approximate == "none") {
    unary_op<kernel_dtypes::gelu_out>("gelu", self, out, [](auto x) { return gelu_erf(x); });
  } else if (approximate == "tanh") {
    unary_op<kernel_dtypes::gelu_out>("gelu", self, out, [](auto x) { return gelu_tanh(x); });
  } else {
    throw Error(BP_STATUS_INVALID_ARGUMENT, "gelu: approximate must be 'none' or 'tanh', got '" +
                                                std::string(approximate) + "'");
  }
}

// grad_output times gelu's derivative at self.
void gelu_backward_grad_input(const TensorView& grad_output, const TensorView& self,
                              std::string_view approximate, const TensorView& grad_input) {
  if (approximate == "none") {
    binary_op<kernel_dtypes::gelu_backward_grad_input>(
        "gelu_backward", grad_output, self, grad_input,
        [](auto g, auto x) { return g * gelu_erf_derivative(x); });
  } else if (approximate == "tanh") {
    binary_op<kernel_dtypes::gelu_backward_grad_input>(
        "gelu_backward", grad_output, self, grad_input,
        [](auto g, auto x) { return g * gelu_tanh_derivative(x); });
  } else {
    throw Error(BP_STATUS_INVALID_ARGUMENT,
                "gelu_backward: approximate must be 'none' or 'tanh', got '" +
                    std::string(approximate) + "'");
  }
}

// 0 where self <= threshold, else grad_output: written that way round, as PyTorch's is, so that
// a NaN self passes the gradient.
void threshold_backward_grad_input(const TensorView& grad_output, const TensorView& self,
                                   const bp::Scalar& threshold, const TensorView& grad_input) {
  require_dtype("threshold_backward", "grad_output", grad_output, grad_input.dtype());
  require_dtype("threshold_backward", "self", self, grad_input.dtype());
  plugin::visit_dtype<kernel_dtypes::threshold_backward_grad_input>(
      grad_input.dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        using C = compute_t<T>;
        const C limit = threshold.to<C>();
        parallel_map_elements(
            grad_input.sizes(), [limit](C g, C x) { return x <= limit ? C(0) : g; },
            output_operand<T>(grad_input), input_operand<T>(grad_output), input_operand<T>(self));
      });
}

namespace {

// out = fn(self, other), with fn comparing in the compute type (NaN compares false), for the
// dtypes of self that Kernel takes.
template <typename Kernel, typename Fn>
void compare(std::string_view op, const TensorView& self, const TensorView& other,
             const TensorView& out, Fn&& fn) {
  require_dtype(op, "other", other, self.dtype());
  require_dtype(op, "out", out, kBool);
  plugin::visit_dtype<Kernel>(self.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    parallel_map_elements(out.sizes(), fn, output_operand<bool>(out), input_operand<T>(self),
                          input_operand<T>(other));
  });
}

// pick ? x : y by masking bits rather than branching, so that the loop vectorises and a random
// condition costs no mispredicted branches.
template <typename C>
C select(bool pick, C x, C y) {
  if constexpr (std::is_same_v<C, bool>) {
    return pick ? x : y;
  } else {
    using Bits = std::conditional_t<
        sizeof(C) == 1, uint8_t,
        std::conditional_t<sizeof(C) == 2, uint16_t,
                           std::conditional_t<sizeof(C) == 4, uint32_t, uint64_t>>>;
    const Bits mask = static_cast<Bits>(Bits{0} - static_cast<Bits>(pick));
    return std::bit_cast<C>(static_cast<Bits>((std::bit_cast<Bits>(x) & mask) |
                                              (std::bit_cast<Bits>(y) & static_cast<Bits>(~mask))));
  }
}

}  // namespace

void eq_Tensor_out(const TensorView& self, const TensorView& other, const TensorView& out) {
  compare<kernel_dtypes::eq_Tensor_out>("eq", self, other, out,
                                        [](auto x, auto y) { return x == y; });
}

void lt_Tensor_out(const TensorView& self, const TensorView& other, const TensorView& out) {
  compare<kernel_dtypes::lt_Tensor_out>("lt", self, other, out,
                                        [](auto x, auto y) { return x < y; });
}

void gt_Tensor_out(const TensorView& self, const TensorView& other, const TensorView& out) {
  compare<kernel_dtypes::gt_Tensor_out>("gt", self, other, out,
                                        [](auto x, auto y) { return x > y; });
}

void where_self_out(const TensorView& condition, const TensorView& self, const TensorView& other,
                    const TensorView& out) {
  require_dtype("where", "condition", condition, kBool);
  require_dtype("where", "self", self, out.dtype());
  require_dtype("where", "other", other, out.dtype());
  plugin::visit_dtype<kernel_dtypes::where_self_out>(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    parallel_map_elements(
        out.sizes(), [](bool pick_self, auto x, auto y) { return select(pick_self, x, y); },
        output_operand<T>(out), input_operand<bool>(condition), input_operand<T>(self),
        input_operand<T>(other));
  });
}

}  // namespace bp::cpu
