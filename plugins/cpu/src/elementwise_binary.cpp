// Elementwise arithmetic on two tensors. The core's meta step has broadcast both inputs to
// out's shape and converted them to out's dtype, so every kernel here is one loop over three
// tensors of one dtype. Integer arithmetic wraps around (backplane/sdk/wrapping_arithmetic.hpp).
#include "CPUNativeFunctions.h"

#include "dtypes.h"
#include "parallel_elements.h"

#include <backplane/sdk/wrapping_arithmetic.hpp>

#include <string_view>

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

}  // namespace bp::cpu
