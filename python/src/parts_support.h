// What the hand-written parts of bp.Tensor and of the module share besides the argument parser
// (arg_parser.h): reading Python numbers and raising errors (defined in tensor_factories.cpp),
// and reading tensor elements back as Python objects (tensor_conversion.cpp).
#pragma once

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <backplane/backplane.h>

#include <optional>

namespace bp::python {

// The calling convention of every function here that takes arguments (vectorcall).
inline constexpr int kFastcall = METH_FASTCALL | METH_KEYWORDS;

// A METH_FASTCALL | METH_KEYWORDS (or METH_NOARGS, METH_O) function as PyMethodDef stores it.
template <typename Function>
PyCFunction as_method(Function* function) {
  return reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(function));
}

// The number an operand holds as PyTorch reads Python numbers: a bool, int or float (or a
// subclass, such as numpy.float64); nullopt for anything else. An int beyond int64 raises
// OverflowError and throws PythonErrorSet.
std::optional<Scalar> python_scalar(PyObject* object);

// Raises TypeError "<function>: argument '<name>' must be <expected>, not <type>" and throws
// PythonErrorSet.
[[noreturn]] void throw_argument_type_error(const char* function, const char* name,
                                            const char* expected, PyObject* got);

// Raises `type` with `message` and throws PythonErrorSet.
[[noreturn]] void throw_python_error(PyObject* type, const char* message);

// The element at `data` of a host tensor of `dtype`, as a Python bool, int or float.
PyObject* python_value(const void* data, DType dtype);

// The value of a one-element tensor on any device, as a Python bool, int or float;
// `function` names the caller in the error for other sizes, which is PyTorch's ValueError
// for int() and float() and its RuntimeError for item().
PyObject* one_element_value(const Tensor& tensor, const char* function, PyObject* error_type);

// A tensor holding a copy of Python data, as bp.tensor makes it: nested sequences of numbers,
// a number, an object with the buffer protocol or __dlpack__, or a bp.Tensor. Without
// `dtype`, the data decides it (PyTorch's rules: bool, int64 or float32 for Python numbers);
// without `device`, the host. Throws PythonErrorSet with TypeError or ValueError for data
// it cannot read.
Tensor tensor_from_data(PyObject* data, std::optional<DType> dtype, std::optional<Device> device);

// The tensor that shares the memory of an object with __dlpack__ (dlpack_exchange.cpp).
// Throws PythonErrorSet when its __dlpack__ fails or returns no DLPack capsule.
Tensor tensor_from_dlpack_object(PyObject* object);

}  // namespace bp::python
