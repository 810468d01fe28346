// Elementwise functions of one tensor. The meta step has given the input out's dtype (a
// floating one for the transcendental functions), so each kernel is one loop.
#include "CPUNativeFunctions.h"

#include "activations.h"
#include "dtypes.h"
#include "parallel_elements.h"
#include "vector_math.h"

#include <cmath>
#include <numbers>
#include <string>
#include <string_view>
#include <type_traits>

namespace bp::cpu {
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

}  // namespace bp::cpu
