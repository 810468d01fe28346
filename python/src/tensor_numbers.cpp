// Tensor's number protocol and comparisons, with PyTorch's type promotion: a Python number is
// a weak operand (x_int32 + 2 stays int32, x_int32 + 2.5 is float32), through the Scalar
// overloads of the ops or, when it comes first, a 0-dim tensor marked as a wrapped number.
#include "tensor_parts.h"

#include "dtype_object.h"
#include "errors.h"
#include "gil.h"
#include "parts_support.h"
#include "python_tensor.h"

#include <backplane/backplane.h>

#include <optional>
#include <string>

namespace bp::python {
namespace {

// A Python number as a 0-dim host tensor that type promotion treats as PyTorch treats a
// Python number, for ops whose number comes first (2 - x).
Tensor wrapped_number(const Scalar& value) {
  const DType dtype = value.is_floating_point() ? kFloat64 : value.is_bool() ? kBool : kInt64;
  Tensor wrapped = scalar_tensor(value, dtype, Device::cpu());
  wrapped.impl()->set_wrapped_number(true);
  return wrapped;
}

// One binary operator: its forms for two tensors, a tensor and a number, and a number and a
// tensor (the reflected operator).
struct BinaryOp {
  Tensor (*tensors)(const Tensor&, const Tensor&);
  Tensor (*tensor_number)(const Tensor&, const Scalar&);
  Tensor (*number_tensor)(const Scalar&, const Tensor&);
};

constexpr BinaryOp kAdd = {
    [](const Tensor& a, const Tensor& b) { return add(a, b); },
    [](const Tensor& a, const Scalar& b) { return add(a, b); },
    // Addition is commutative, bit for bit.
    [](const Scalar& a, const Tensor& b) { return add(b, a); },
};
constexpr BinaryOp kSub = {
    [](const Tensor& a, const Tensor& b) { return sub(a, b); },
    [](const Tensor& a, const Scalar& b) { return sub(a, b); },
    [](const Scalar& a, const Tensor& b) { return sub(wrapped_number(a), b); },
};
constexpr BinaryOp kMul = {
    [](const Tensor& a, const Tensor& b) { return mul(a, b); },
    [](const Tensor& a, const Scalar& b) { return mul(a, b); },
    [](const Scalar& a, const Tensor& b) { return mul(b, a); },
};
constexpr BinaryOp kDiv = {
    [](const Tensor& a, const Tensor& b) { return div(a, b); },
    [](const Tensor& a, const Scalar& b) { return div(a, b); },
    [](const Scalar& a, const Tensor& b) { return div(wrapped_number(a), b); },
};

// Python calls a binary slot with the tensor on either side; anything but a tensor or a
// number on the other side is left to that object's own operator.
PyObject* binary(PyObject* a, PyObject* b, const BinaryOp& op) {
  return guarded([&]() -> PyObject* {
    if (is_tensor(a)) {
      const Tensor& x = unwrap_tensor(a);
      if (is_tensor(b)) {
        const Tensor& y = unwrap_tensor(b);
        return wrap_tensor(without_gil([&] { return op.tensors(x, y); }));
      }
      const std::optional<Scalar> number = python_scalar(b);
      if (!number) Py_RETURN_NOTIMPLEMENTED;
      return wrap_tensor(without_gil([&] { return op.tensor_number(x, *number); }));
    }
    if (!is_tensor(b)) Py_RETURN_NOTIMPLEMENTED;
    const std::optional<Scalar> number = python_scalar(a);
    if (!number) Py_RETURN_NOTIMPLEMENTED;
    const Tensor& y = unwrap_tensor(b);
    return wrap_tensor(without_gil([&] { return op.number_tensor(*number, y); }));
  });
}

PyObject* tensor_add(PyObject* a, PyObject* b) { return binary(a, b, kAdd); }
PyObject* tensor_subtract(PyObject* a, PyObject* b) { return binary(a, b, kSub); }
PyObject* tensor_multiply(PyObject* a, PyObject* b) { return binary(a, b, kMul); }
PyObject* tensor_true_divide(PyObject* a, PyObject* b) { return binary(a, b, kDiv); }

PyObject* tensor_matrix_multiply(PyObject* a, PyObject* b) {
  return guarded([&]() -> PyObject* {
    if (!is_tensor(a) || !is_tensor(b)) Py_RETURN_NOTIMPLEMENTED;
    const Tensor& x = unwrap_tensor(a);
    const Tensor& y = unwrap_tensor(b);
    return wrap_tensor(without_gil([&] { return matmul(x, y); }));
  });
}

// x += y and the like: the op writes into self's tensor, and Python gets self back.
struct InplaceOp {
  void (*tensor)(Tensor&, const Tensor&);
  void (*number)(Tensor&, const Scalar&);
};

constexpr InplaceOp kAddInplace = {
    [](Tensor& self, const Tensor& other) { self.add_(other); },
    [](Tensor& self, const Scalar& other) { self.add_(other); },
};
constexpr InplaceOp kSubInplace = {
    [](Tensor& self, const Tensor& other) { self.sub_(other); },
    [](Tensor& self, const Scalar& other) { self.sub_(other); },
};
constexpr InplaceOp kMulInplace = {
    [](Tensor& self, const Tensor& other) { self.mul_(other); },
    [](Tensor& self, const Scalar& other) { self.mul_(other); },
};
constexpr InplaceOp kDivInplace = {
    [](Tensor& self, const Tensor& other) { self.div_(other); },
    [](Tensor& self, const Scalar& other) { self.div_(other); },
};

PyObject* inplace(PyObject* self, PyObject* other, const InplaceOp& op) {
  return guarded([&]() -> PyObject* {
    if (!is_tensor(self)) Py_RETURN_NOTIMPLEMENTED;
    // Another handle on self's TensorImpl: the op writes into the tensor the object holds.
    Tensor target = unwrap_tensor(self);
    if (is_tensor(other)) {
      const Tensor& source = unwrap_tensor(other);
      without_gil([&] { op.tensor(target, source); });
    } else {
      const std::optional<Scalar> number = python_scalar(other);
      if (!number) Py_RETURN_NOTIMPLEMENTED;
      without_gil([&] { op.number(target, *number); });
    }
    Py_INCREF(self);
    return self;
  });
}

PyObject* tensor_inplace_add(PyObject* a, PyObject* b) { return inplace(a, b, kAddInplace); }
PyObject* tensor_inplace_subtract(PyObject* a, PyObject* b) { return inplace(a, b, kSubInplace); }
PyObject* tensor_inplace_multiply(PyObject* a, PyObject* b) { return inplace(a, b, kMulInplace); }
PyObject* tensor_inplace_true_divide(PyObject* a, PyObject* b) {
  return inplace(a, b, kDivInplace);
}

template <Tensor (*Op)(const Tensor&)>
PyObject* unary(PyObject* self) {
  return guarded([&] {
    const Tensor& x = unwrap_tensor(self);
    return wrap_tensor(without_gil([&] { return Op(x); }));
  });
}

Tensor negate(const Tensor& x) { return neg(x); }
Tensor absolute(const Tensor& x) { return abs(x); }

// ~x: logical not, for bool tensors only; the integer forms would need a bitwise_not op.
PyObject* tensor_invert(PyObject* self) {
  return guarded([&]() -> PyObject* {
    const Tensor& x = unwrap_tensor(self);
    if (x.dtype() != kBool) {
      PyErr_Format(PyExc_TypeError,
                   "~ (bitwise not) takes bool tensors only here, and this one is %s: "
                   "Backplane has no bitwise_not op",
                   python_dtype_name(x.dtype()));
      return nullptr;
    }
    return wrap_tensor(without_gil([&] { return eq(x, Scalar(false)); }));
  });
}

// The int-returning slots (nb_bool) need -1 rather than null on failure.
template <typename Body>
int guarded_int(Body&& body) noexcept {
  try {
    return body();
  } catch (const PythonErrorSet&) {
    return -1;
  } catch (...) {
    set_python_error_from_current_exception();
    return -1;
  }
}

int tensor_bool(PyObject* self) {
  return guarded_int([&] {
    const Tensor& x = unwrap_tensor(self);
    const int64_t numel = x.numel();
    if (numel == 0) {
      throw_python_error(PyExc_RuntimeError, "Boolean value of Tensor with no values is ambiguous");
    }
    if (numel > 1) {
      throw_python_error(PyExc_RuntimeError,
                         "Boolean value of Tensor with more than one value is ambiguous");
    }
    PyObject* value = one_element_value(x, "bool", PyExc_RuntimeError);
    if (value == nullptr) return -1;
    const int truth = PyObject_IsTrue(value);
    Py_DECREF(value);
    return truth;
  });
}

// int(x) and float(x): Python's own conversion of the element (int() truncates a float; NaN
// is a ValueError).
template <PyObject* (*Convert)(PyObject*)>
PyObject* convert_element(PyObject* self, const char* function) {
  return guarded([&]() -> PyObject* {
    PyObject* value = one_element_value(unwrap_tensor(self), function, PyExc_ValueError);
    if (value == nullptr) return nullptr;
    PyObject* result = Convert(value);
    Py_DECREF(value);
    return result;
  });
}

PyObject* tensor_int(PyObject* self) { return convert_element<PyNumber_Long>(self, "int"); }
PyObject* tensor_float(PyObject* self) { return convert_element<PyNumber_Float>(self, "float"); }

// operator.index(x), as in range(x) and list[x]: integer (or bool) tensors of one element.
PyObject* tensor_index(PyObject* self) {
  return guarded([&]() -> PyObject* {
    const Tensor& x = unwrap_tensor(self);
    if (!is_integral(x.dtype(), /*include_bool=*/true) || x.numel() != 1) {
      throw_python_error(PyExc_TypeError,
                         "only integer tensors of a single element can be converted to an "
                         "index");
    }
    PyObject* value = one_element_value(x, "index", PyExc_TypeError);
    if (value == nullptr || !PyBool_Check(value)) return value;
    // __index__ must give an int, not a bool.
    const long truth = value == Py_True;
    Py_DECREF(value);
    return PyLong_FromLong(truth);
  });
}

// x <= y is x < y or x == y, and x != y is not (x == y): exact for every dtype, NaN included
// (x >= y is not the negation of x < y when either is NaN).
Tensor either(const Tensor& a, const Tensor& b) { return where(a, a, b); }

template <typename Other>
Tensor compare(const Tensor& x, const Other& other, int op) {
  switch (op) {
    case Py_EQ: return eq(x, other);
    case Py_NE: return eq(eq(x, other), Scalar(false));
    case Py_LT: return lt(x, other);
    case Py_GT: return gt(x, other);
    case Py_LE: return either(lt(x, other), eq(x, other));
    case Py_GE: return either(gt(x, other), eq(x, other));
  }
  throw Error(ErrorCode::Internal, "tensor_richcompare: unknown comparison");
}

constexpr PyNumberMethods make_number_methods() {
  PyNumberMethods methods{};
  methods.nb_add = tensor_add;
  methods.nb_subtract = tensor_subtract;
  methods.nb_multiply = tensor_multiply;
  methods.nb_true_divide = tensor_true_divide;
  methods.nb_matrix_multiply = tensor_matrix_multiply;
  methods.nb_inplace_add = tensor_inplace_add;
  methods.nb_inplace_subtract = tensor_inplace_subtract;
  methods.nb_inplace_multiply = tensor_inplace_multiply;
  methods.nb_inplace_true_divide = tensor_inplace_true_divide;
  methods.nb_negative = unary<negate>;
  methods.nb_absolute = unary<absolute>;
  methods.nb_invert = tensor_invert;
  methods.nb_bool = tensor_bool;
  methods.nb_int = tensor_int;
  methods.nb_float = tensor_float;
  methods.nb_index = tensor_index;
  return methods;
}

}  // namespace

constinit PyNumberMethods tensor_number_methods = make_number_methods();

PyObject* tensor_richcompare(PyObject* self, PyObject* other, int op) {
  return guarded([&]() -> PyObject* {
    if (!is_tensor(self)) Py_RETURN_NOTIMPLEMENTED;
    const Tensor& x = unwrap_tensor(self);
    if (is_tensor(other)) {
      const Tensor& y = unwrap_tensor(other);
      return wrap_tensor(without_gil([&] { return compare(x, y, op); }));
    }
    const std::optional<Scalar> number = python_scalar(other);
    if (!number) Py_RETURN_NOTIMPLEMENTED;
    return wrap_tensor(without_gil([&] { return compare(x, *number, op); }));
  });
}

}  // namespace bp::python
