// Acme's kernels: add, mul and relu. The core has already checked the arguments, broadcast the
// inputs to the output's shape and converted them to one dtype; a kernel only computes. Acme
// supports float32 and float64 and says so for anything else.
#include "AcmeNativeFunctions.h"

#include <string>

namespace acme {
namespace {

using bp::plugin::input_operand;
using bp::plugin::map_elements;
using bp::plugin::output_operand;
using bp::plugin::TensorView;

template <typename Fn>
void for_float_types(const char* op, bp::DType dtype, Fn&& fn) {
  switch (dtype) {
    case bp::DType::Float32: fn(bp::plugin::TypeTag<float>{}); return;
    case bp::DType::Float64: fn(bp::plugin::TypeTag<double>{}); return;
    default:
      throw bp::plugin::Error(BP_STATUS_UNIMPLEMENTED,
                              std::string(op) + " on acme supports Float and Double, not " +
                                  std::string(bp::dtype_name(dtype)) +
                                  "; convert the tensors with .to(bp::kFloat32) first");
  }
}

}  // namespace

void add_out(const TensorView& self, const TensorView& other, const bp::Scalar& alpha,
             const TensorView& out) {
  for_float_types("add", out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T a = alpha.to<T>();
    map_elements(out.sizes(), [a](T x, T y) { return x + a * y; }, output_operand<T>(out),
                 input_operand<T>(self), input_operand<T>(other));
  });
}

void mul_out(const TensorView& self, const TensorView& other, const TensorView& out) {
  for_float_types("mul", out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    map_elements(out.sizes(), [](T x, T y) { return x * y; }, output_operand<T>(out),
                 input_operand<T>(self), input_operand<T>(other));
  });
}

void relu_out(const TensorView& self, const TensorView& out) {
  for_float_types("relu", out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    map_elements(out.sizes(), [](T x) { return x < T(0) ? T(0) : x; }, output_operand<T>(out),
                 input_operand<T>(self));
  });
}

}  // namespace acme
