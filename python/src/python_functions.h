// What bp-codegen generates from ops.yaml (python_functions.cpp): the module's op functions and
// Tensor's op methods, each table ending with a zeroed sentinel, and the schemas they bind.
#pragma once

#define PY_SSIZE_T_CLEAN
#include <Python.h>

namespace bp::python {

extern PyMethodDef generated_functions[];
extern PyMethodDef generated_tensor_methods[];

// The schema of every ops.yaml entry that the two tables bind, once each, in ops.yaml order,
// ending with nullptr: bp._C._bound_schemas().
extern const char* const generated_schemas[];

}  // namespace bp::python
