// Elementwise ops: arithmetic on two tensors (add, sub, mul, div, maximum, minimum), functions
// of one tensor (neg, abs, exp, log, sqrt, tanh, sigmoid, silu, relu, gelu), comparisons with
// Bool results (eq, lt, gt) and where. The core's meta step has broadcast the inputs to out's
// shape and given them out's dtype (a floating one for the transcendental functions; the
// compared inputs one dtype of their own), so every kernel is one loop. Integer arithmetic wraps
// around (backplane/sdk/wrapping_arithmetic.hpp).
#include "CPUNativeFunctions.h"

#include "kernels/activations.h"
#include "kernels/dtypes.h"
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

// out = f(self, other) elementwise for the dtypes Supported accepts, where
// f = element_fn_for(TypeTag<T>{}) takes and returns the compute type of T.
template <template <typename> class Supported, typename MakeFn>
void binary_op(std::string_view op, const TensorView& self, const TensorView& other,
               const TensorView& out, MakeFn&& element_fn_for) {
  require_dtype(op, "self", self, out.dtype());
  require_dtype(op, "other", other, out.dtype());
  visit_supported<Supported>(op, out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    parallel_map_elements(out.sizes(), element_fn_for(tag), output_operand<T>(out),
                          input_operand<T>(self), input_operand<T>(other));
  });
}

// The same element function for every dtype.
template <typename Fn>
auto for_every_dtype(Fn fn) {
  return [fn](auto /*tag*/) { return fn; };
}

// x, y -> fn(x, alpha, y), with alpha converted to each dtype's compute type once per call.
template <typename Fn>
auto with_alpha(const bp::Scalar& alpha, Fn fn) {
  return [&alpha, fn](auto tag) {
    const auto scale = alpha.to<compute_t<typename decltype(tag)::type>>();
    return [scale, fn](auto x, auto y) { return fn(x, scale, y); };
  };
}

}  // namespace

void add_out(const TensorView& self, const TensorView& other, const bp::Scalar& alpha,
             const TensorView& out) {
  binary_op<AnyDType>("add", self, other, out, with_alpha(alpha, [](auto x, auto a, auto y) {
                        return wrapping(std::plus{}, x, wrapping(std::multiplies{}, a, y));
                      }));
}

// PyTorch refuses bool subtraction (it would be ambiguous with logical_xor / logical_not).
void sub_out(const TensorView& self, const TensorView& other, const bp::Scalar& alpha,
             const TensorView& out) {
  binary_op<NonBoolDType>("sub", self, other, out, with_alpha(alpha, [](auto x, auto a, auto y) {
                            return wrapping(std::minus{}, x, wrapping(std::multiplies{}, a, y));
                          }));
}

void mul_out(const TensorView& self, const TensorView& other, const TensorView& out) {
  binary_op<AnyDType>("mul", self, other, out,
                      for_every_dtype(
                          [](auto x, auto y) { return wrapping(std::multiplies{}, x, y); }));
}

// True division: the meta step promotes integer inputs to a floating dtype.
void div_out(const TensorView& self, const TensorView& other, const TensorView& out) {
  binary_op<FloatingDType>("div", self, other, out,
                           for_every_dtype([](auto x, auto y) { return x / y; }));
}

void maximum_out(const TensorView& self, const TensorView& other, const TensorView& out) {
  binary_op<AnyDType>("maximum", self, other, out,
                      for_every_dtype([](auto x, auto y) { return max_propagating_nan(x, y); }));
}

void minimum_out(const TensorView& self, const TensorView& other, const TensorView& out) {
  binary_op<AnyDType>("minimum", self, other, out,
                      for_every_dtype([](auto x, auto y) { return min_propagating_nan(x, y); }));
}

namespace {

// out = fn(self) elementwise for the dtypes Supported accepts; fn takes and returns the compute
// type.
template <template <typename> class Supported, typename Fn>
void unary_op(std::string_view op, const TensorView& self, const TensorView& out, Fn&& fn) {
  require_dtype(op, "self", self, out.dtype());
  visit_supported<Supported>(op, out.dtype(), [&](auto tag) {
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
  unary_op<NonBoolDType>("neg", self, out, [](auto x) { return -x; });
}

void abs_out(const TensorView& self, const TensorView& out) {
  unary_op<AnyDType>("abs", self, out, [](auto x) { return absolute(x); });
}

void exp_out(const TensorView& self, const TensorView& out) {
  unary_op<FloatingDType>("exp", self, out, [](auto x) { return exp_of(x); });
}

void log_out(const TensorView& self, const TensorView& out) {
  unary_op<FloatingDType>("log", self, out, [](auto x) { return log_of(x); });
}

void sqrt_out(const TensorView& self, const TensorView& out) {
  unary_op<FloatingDType>("sqrt", self, out, [](auto x) { return std::sqrt(x); });
}

void tanh_out(const TensorView& self, const TensorView& out) {
  unary_op<FloatingDType>("tanh", self, out, [](auto x) { return tanh_of(x); });
}

void sigmoid_out(const TensorView& self, const TensorView& out) {
  unary_op<FloatingDType>("sigmoid", self, out,
                          [](auto x) { return decltype(x)(1) / (decltype(x)(1) + exp_of(-x)); });
}

// x * sigmoid(x), as x / (1 + e^-x).
void silu_out(const TensorView& self, const TensorView& out) {
  unary_op<FloatingDType>("silu", self, out,
                          [](auto x) { return x / (decltype(x)(1) + exp_of(-x)); });
}

void relu_out(const TensorView& self, const TensorView& out) {
  unary_op<NonBoolDType>("relu", self, out, [](auto x) { return relu_of(x); });
}

void gelu_out(const TensorView& self, std::string_view approximate, const TensorView& out) {
  if (approximate == "none") {
    unary_op<FloatingDType>("gelu", self, out, [](auto x) { return gelu_erf(x); });
  } else if (approximate == "tanh") {
    unary_op<FloatingDType>("gelu", self, out, [](auto x) { return gelu_tanh(x); });
  } else {
    throw Error(BP_STATUS_INVALID_ARGUMENT, "gelu: approximate must be 'none' or 'tanh', got '" +
                                                std::string(approximate) + "'");
  }
}

namespace {

// out = fn(self, other), with fn comparing in the compute type (NaN compares false).
template <typename Fn>
void compare(std::string_view op, const TensorView& self, const TensorView& other,
             const TensorView& out, Fn&& fn) {
  require_dtype(op, "other", other, self.dtype());
  require_dtype(op, "out", out, kBool);
  plugin::visit(self.dtype(), [&](auto tag) {
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
        std::conditional_t<sizeof(C) == 2, uint16_t, std::conditional_t<sizeof(C) == 4, uint32_t, uint64_t>>>;
    const Bits mask = static_cast<Bits>(Bits{0} - static_cast<Bits>(pick));
    return std::bit_cast<C>(static_cast<Bits>((std::bit_cast<Bits>(x) & mask) |
                                              (std::bit_cast<Bits>(y) & static_cast<Bits>(~mask))));
  }
}

}  // namespace

void eq_Tensor_out(const TensorView& self, const TensorView& other, const TensorView& out) {
  compare("eq", self, other, out, [](auto x, auto y) { return x == y; });
}

void lt_Tensor_out(const TensorView& self, const TensorView& other, const TensorView& out) {
  compare("lt", self, other, out, [](auto x, auto y) { return x < y; });
}

void gt_Tensor_out(const TensorView& self, const TensorView& other, const TensorView& out) {
  compare("gt", self, other, out, [](auto x, auto y) { return x > y; });
}

void where_self_out(const TensorView& condition, const TensorView& self, const TensorView& other,
                    const TensorView& out) {
  require_dtype("where", "condition", condition, kBool);
  require_dtype("where", "self", self, out.dtype());
  require_dtype("where", "other", other, out.dtype());
  plugin::visit(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    parallel_map_elements(
        out.sizes(), [](bool pick_self, auto x, auto y) { return select(pick_self, x, y); },
        output_operand<T>(out), input_operand<bool>(condition), input_operand<T>(self),
        input_operand<T>(other));
  });
}

}  // namespace bp::cpu
