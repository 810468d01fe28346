// The Scalar overloads of the arithmetic and comparison ops: the number becomes a 0-dim host
// tensor marked as a wrapped number, so that type promotion treats it as PyTorch treats a
// Python number (x_int32 + 2 stays Int32; x_int32 + 2.5 is Float32) and the meta step moves it
// to self's device in the dtype the op computes in.
#include <backplane/backplane.h>

namespace bp {
namespace {

// The widest type of the number's kind, as PyTorch wraps numbers, so no precision is lost
// before promotion picks the computing dtype.
Tensor wrap_number(const Scalar& value) {
  const DType dtype = value.is_floating_point() ? kFloat64 : value.is_bool() ? kBool : kInt64;
  Tensor wrapped = scalar_tensor(value, dtype, Device::cpu());
  wrapped.impl()->set_wrapped_number(true);
  return wrapped;
}

}  // namespace

Tensor add(const Tensor& self, const Scalar& other, const Scalar& alpha) {
  return add(self, wrap_number(other), alpha);
}
Tensor sub(const Tensor& self, const Scalar& other, const Scalar& alpha) {
  return sub(self, wrap_number(other), alpha);
}
Tensor mul(const Tensor& self, const Scalar& other) { return mul(self, wrap_number(other)); }
Tensor div(const Tensor& self, const Scalar& other) { return div(self, wrap_number(other)); }
Tensor eq(const Tensor& self, const Scalar& other) { return eq(self, wrap_number(other)); }
Tensor lt(const Tensor& self, const Scalar& other) { return lt(self, wrap_number(other)); }
Tensor gt(const Tensor& self, const Scalar& other) { return gt(self, wrap_number(other)); }

Tensor& eq_out(Tensor& out, const Tensor& self, const Scalar& other) {
  return eq_out(out, self, wrap_number(other));
}
Tensor& lt_out(Tensor& out, const Tensor& self, const Scalar& other) {
  return lt_out(out, self, wrap_number(other));
}
Tensor& gt_out(Tensor& out, const Tensor& self, const Scalar& other) {
  return gt_out(out, self, wrap_number(other));
}

namespace detail {

Tensor& method_add__Scalar(Tensor& self, const Scalar& other, const Scalar& alpha) {
  return self.add_(wrap_number(other), alpha);
}
Tensor& method_sub__Scalar(Tensor& self, const Scalar& other, const Scalar& alpha) {
  return self.sub_(wrap_number(other), alpha);
}
Tensor& method_mul__Scalar(Tensor& self, const Scalar& other) {
  return self.mul_(wrap_number(other));
}
Tensor& method_div__Scalar(Tensor& self, const Scalar& other) {
  return self.div_(wrap_number(other));
}
Tensor& method_eq__Scalar(Tensor& self, const Scalar& other) {
  return self.eq_(wrap_number(other));
}
Tensor& method_lt__Scalar(Tensor& self, const Scalar& other) {
  return self.lt_(wrap_number(other));
}
Tensor& method_gt__Scalar(Tensor& self, const Scalar& other) {
  return self.gt_(wrap_number(other));
}

}  // namespace detail
}  // namespace bp
