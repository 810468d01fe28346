// Acme's kernels: add, mul and relu. The core has already checked the arguments, broadcast the
// inputs to the output's shape and converted them to one dtype; a kernel only computes. Acme
// computes in float32 and float64 only, and refuses the other dtypes its ops take.
#include "AcmeNativeFunctions.h"

namespace acme {
namespace {

using bp::plugin::input_operand;
using bp::plugin::map_elements;
using bp::plugin::output_operand;
using bp::plugin::TensorView;
using bp::plugin::visit_dtype;
namespace kernel_dtypes = bp::plugin::kernel_dtypes;

// The dtypes Acme computes in: visit_dtype narrows what ops.yaml declares for each op to them.
constexpr auto kAcmeTypes = bp::plugin::dtype_set({bp::DType::Float32, bp::DType::Float64});

}  // namespace

void add_out(const TensorView& self, const TensorView& other, const bp::Scalar& alpha,
             const TensorView& out) {
  visit_dtype<kernel_dtypes::add_out, kAcmeTypes>(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T a = alpha.to<T>();
    map_elements(
        out.sizes(), [a](T x, T y) { return x + a * y; }, output_operand<T>(out),
        input_operand<T>(self), input_operand<T>(other));
  });
}

void mul_out(const TensorView& self, const TensorView& other, const TensorView& out) {
  visit_dtype<kernel_dtypes::mul_out, kAcmeTypes>(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    map_elements(
        out.sizes(), [](T x, T y) { return x * y; }, output_operand<T>(out), input_operand<T>(self),
        input_operand<T>(other));
  });
}

void relu_out(const TensorView& self, const TensorView& out) {
  visit_dtype<kernel_dtypes::relu_out, kAcmeTypes>(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    map_elements(
        out.sizes(), [](T x) { return x < T(0) ? T(0) : x; }, output_operand<T>(out),
        input_operand<T>(self));
  });
}

}  // namespace acme
