#include "autograd/formulas.h"

namespace bp::autograd::formulas {

namespace {
Tensor zero_like(const Tensor& grad) { return zeros({}, grad.dtype(), grad.device()); }
}  // namespace

Tensor scale_by(const Tensor& grad, const Scalar& factor) {
  return factor.to<double>() == 1.0 ? grad : grad * factor;
}

Tensor sgn(const Tensor& self) {
  return gt(self, 0).to(self.dtype()) - lt(self, 0).to(self.dtype());
}

Tensor maximum_backward(const Tensor& grad, const Tensor& self, const Tensor& other) {
  const Tensor zero = zero_like(grad);
  const Tensor half = where(eq(self, other), grad / 2, grad);
  return where(lt(self, other), zero, half);
}

Tensor minimum_backward(const Tensor& grad, const Tensor& self, const Tensor& other) {
  const Tensor zero = zero_like(grad);
  const Tensor half = where(eq(self, other), grad / 2, grad);
  return where(gt(self, other), zero, half);
}

Tensor where_backward_self(const Tensor& grad, const Tensor& condition) {
  return where(condition, grad, zero_like(grad));
}

Tensor where_backward_other(const Tensor& grad, const Tensor& condition) {
  return where(condition, zero_like(grad), grad);
}

Tensor sigmoid_backward(const Tensor& grad, const Tensor& result) {
  return grad * result * (1 - result);
}

Tensor tanh_backward(const Tensor& grad, const Tensor& result) {
  return grad * (1 - result * result);
}

Tensor silu_backward(const Tensor& grad, const Tensor& self) {
  const Tensor s = sigmoid(self);
  return grad * s * (1 + self * (1 - s));
}

}  // namespace bp::autograd::formulas
