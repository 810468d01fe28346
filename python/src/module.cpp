// backplane._C: the types, the generated op bindings and the written functions, gathered into
// one module that backplane/__init__.py re-exports.
#include "device_object.h"
#include "dtype_object.h"
#include "errors.h"
#include "python_functions.h"
#include "python_tensor.h"
#include "tensor_parts.h"

namespace bp::python {
namespace {

PyObject* bound_schemas(PyObject*, PyObject*) {
  PyObject* list = PyList_New(0);
  if (list == nullptr) return nullptr;
  for (const char* const* schema = generated_schemas; *schema != nullptr; ++schema) {
    PyObject* text = PyUnicode_FromString(*schema);
    if (text == nullptr || PyList_Append(list, text) < 0) {
      Py_XDECREF(text);
      Py_DECREF(list);
      return nullptr;
    }
    Py_DECREF(text);
  }
  return list;
}

PyMethodDef module_functions[] = {
    {"_bound_schemas", bound_schemas, METH_NOARGS,
     "_bound_schemas() -> list[str]\n\nThe ops.yaml schema of every overload that a function or "
     "a Tensor method binds."},
    {nullptr, nullptr, 0, nullptr},
};

PyModuleDef module_definition = {
    PyModuleDef_HEAD_INIT,
    "backplane._C",
    "Backplane's compiled core: tensors, dtypes, devices and every op of ops.yaml.",
    -1,
    module_functions,
    nullptr,
    nullptr,
    nullptr,
    nullptr,
};

bool fill(PyObject* module) {
  if (!add_error_type(module) || !add_dtype_type(module) || !add_device_type(module) ||
      !add_tensor_type(module) || !add_event_type(module) || !add_optimizer_type(module)) {
    return false;
  }
  // The written functions come after the generated ones, and replace any of the same name
  // (the factories that take sizes as separate arguments).
  for (PyMethodDef* table : {generated_functions, factory_functions, runtime_functions,
                             autograd_functions, dlpack_functions, optimizer_functions}) {
    if (PyModule_AddFunctions(module, table) < 0) return false;
  }
  return true;
}

}  // namespace
}  // namespace bp::python

PyMODINIT_FUNC PyInit__C() {
  PyObject* module = PyModule_Create(&bp::python::module_definition);
  if (module == nullptr) return nullptr;
  if (!bp::python::fill(module)) {
    Py_DECREF(module);
    return nullptr;
  }
  return module;
}
