// bp.dtype: one immortal object per DType (bp.float32, bp.int64, ...), compared by identity.
#pragma once

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <backplane/backplane.h>

namespace bp::python {

extern PyTypeObject* dtype_type;

// Creates the type and its objects, and adds `dtype` and every dtype object under each of its
// names (float32 and float, ...) to the module. Returns false with a Python exception set.
bool add_dtype_type(PyObject* module);

inline bool is_dtype(PyObject* object) { return Py_TYPE(object) == dtype_type; }
// The DType of a bp.dtype object (is_dtype(object) must hold).
DType unwrap_dtype(PyObject* object);
// The bp.dtype object of `dtype`, as a new reference.
PyObject* wrap_dtype(DType dtype);
// The dtype's name in Python, as messages spell it: "float32", "int64", ...
const char* python_dtype_name(DType dtype);

}  // namespace bp::python
