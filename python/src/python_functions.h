// What bp-codegen generates from ops.yaml (python_functions.cpp): the module's op functions and
// Tensor's op methods, each table ending with a zeroed sentinel.
#pragma once

#define PY_SSIZE_T_CLEAN
#include <Python.h>

namespace bp::python {

extern PyMethodDef generated_functions[];
extern PyMethodDef generated_tensor_methods[];
// Every schema string bound by a function or a method, each once, ending with a null pointer:
// what bp._C._bound_schemas() lists.
extern const char* const generated_schemas[];

}  // namespace bp::python
