// bp.device: a device type and index, as bp::Device holds them.
#pragma once

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <backplane/backplane.h>

namespace bp::python {

extern PyTypeObject* device_type;

// Creates the type and adds it to the module as `device`. Returns false with a Python exception
// set.
bool add_device_type(PyObject* module);

inline bool is_device(PyObject* object) { return Py_TYPE(object) == device_type; }
// A new bp.device object.
PyObject* wrap_device(Device device);

// A bp.device object or a device string ("cpu", "cuda:1") as a Device. Anything else raises
// TypeError, and a string that names no loaded device raises ValueError; both messages start
// with `what` (such as "to(): argument 'device'"), and both throw PythonErrorSet.
Device device_from_python(PyObject* object, const char* what);

}  // namespace bp::python
