// The Scalar overloads of the arithmetic and comparison ops: the number becomes a 0-dim host
// tensor marked as a wrapped number, so that type promotion treats it as PyTorch treats a
// Python number (x_int32 + 2 stays Int32; x_int32 + 2.5 is Float32) and the meta step moves it
// to self's device in the dtype the op computes in.
#include <backplane/backplane.h>

#include <core_generated/CompositeFunctions.h>

namespace bp::composite {
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

Tensor add_Scalar(const Tensor& self, const Scalar& other, const Scalar& alpha) {
  return add(self, wrap_number(other), alpha);
}
Tensor sub_Scalar(const Tensor& self, const Scalar& other, const Scalar& alpha) {
  return sub(self, wrap_number(other), alpha);
}
Tensor mul_Scalar(const Tensor& self, const Scalar& other) { return mul(self, wrap_number(other)); }
Tensor div_Scalar(const Tensor& self, const Scalar& other) { return div(self, wrap_number(other)); }
Tensor eq_Scalar(const Tensor& self, const Scalar& other) { return eq(self, wrap_number(other)); }
Tensor lt_Scalar(const Tensor& self, const Scalar& other) { return lt(self, wrap_number(other)); }
Tensor gt_Scalar(const Tensor& self, const Scalar& other) { return gt(self, wrap_number(other)); }

Tensor& eq_Scalar_out(Tensor& out, const Tensor& self, const Scalar& other) {
  return eq_out(out, self, wrap_number(other));
}
Tensor& lt_Scalar_out(Tensor& out, const Tensor& self, const Scalar& other) {
  return lt_out(out, self, wrap_number(other));
}
Tensor& gt_Scalar_out(Tensor& out, const Tensor& self, const Scalar& other) {
  return gt_out(out, self, wrap_number(other));
}

Tensor& add__Scalar(Tensor& self, const Scalar& other, const Scalar& alpha) {
  return self.add_(wrap_number(other), alpha);
}
Tensor& sub__Scalar(Tensor& self, const Scalar& other, const Scalar& alpha) {
  return self.sub_(wrap_number(other), alpha);
}
Tensor& mul__Scalar(Tensor& self, const Scalar& other) { return self.mul_(wrap_number(other)); }
Tensor& div__Scalar(Tensor& self, const Scalar& other) { return self.div_(wrap_number(other)); }
Tensor& eq__Scalar(Tensor& self, const Scalar& other) { return self.eq_(wrap_number(other)); }
Tensor& lt__Scalar(Tensor& self, const Scalar& other) { return self.lt_(wrap_number(other)); }
Tensor& gt__Scalar(Tensor& self, const Scalar& other) { return self.gt_(wrap_number(other)); }

}  // namespace bp::composite
