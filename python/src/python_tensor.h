// bp.Tensor: the Python object that holds one bp::Tensor.
#pragma once

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <backplane/backplane.h>

#include <initializer_list>

namespace bp::python {

struct PythonTensor {
  PyObject_HEAD Tensor tensor;
};

extern PyTypeObject* tensor_type;

inline bool is_tensor(PyObject* object) { return PyObject_TypeCheck(object, tensor_type); }
// The tensor of a bp.Tensor object (is_tensor(object) must hold).
inline const Tensor& unwrap_tensor(PyObject* object) {
  return reinterpret_cast<PythonTensor*>(object)->tensor;
}
// A new bp.Tensor object holding `tensor`; an undefined tensor becomes None.
PyObject* wrap_tensor(Tensor tensor);
PyObject* wrap_tensor_tuple(std::initializer_list<Tensor> tensors, PyTypeObject* named_type);

// Creates the type (with the generated methods of python_functions.cpp added to the written
// ones) and adds it to the module as `Tensor`. Returns false with a Python exception set.
bool add_tensor_type(PyObject* module);

}  // namespace bp::python
