#include "dtype_object.h"

#include <array>
#include <string>

namespace bp::python {
namespace {

struct DTypeObject {
  PyObject_HEAD
  DType dtype;
  const char* name;  // the first of its names: "float32"
};

struct DTypeNames {
  DType dtype;
  const char* name;
  const char* alias;  // PyTorch's other name for it, or null
};

constexpr DTypeNames kNames[] = {
    {DType::Float32, "float32", "float"}, {DType::Float64, "float64", "double"},
    {DType::Float16, "float16", "half"},  {DType::BFloat16, "bfloat16", nullptr},
    {DType::Int8, "int8", nullptr},       {DType::UInt8, "uint8", nullptr},
    {DType::Int32, "int32", "int"},       {DType::Int64, "int64", "long"},
    {DType::Bool, "bool", nullptr},
};
constexpr size_t kCount = std::size(kNames);

std::array<DTypeObject*, kCount> objects{};

size_t index_of(DType dtype) {
  for (size_t k = 0; k < kCount; ++k) {
    if (kNames[k].dtype == dtype) return k;
  }
  return 0;
}

DTypeObject* as_dtype(PyObject* self) { return reinterpret_cast<DTypeObject*>(self); }

PyObject* dtype_repr(PyObject* self) {
  return PyUnicode_FromFormat("backplane.%s", as_dtype(self)->name);
}

PyObject* dtype_itemsize(PyObject* self, void*) {
  return PyLong_FromSize_t(element_size(as_dtype(self)->dtype));
}

PyObject* dtype_is_floating_point(PyObject* self, void*) {
  return PyBool_FromLong(is_floating_point(as_dtype(self)->dtype));
}

PyObject* dtype_is_signed(PyObject* self, void*) {
  const DType dtype = as_dtype(self)->dtype;
  return PyBool_FromLong(dtype != DType::UInt8 && dtype != DType::Bool);
}

// Pickling and copying give back the same object, as the module attribute of its name.
PyObject* dtype_reduce(PyObject* self, PyObject*) {
  return PyUnicode_FromString(as_dtype(self)->name);
}

PyGetSetDef dtype_getset[] = {
    {"itemsize", dtype_itemsize, nullptr, "Bytes per element.", nullptr},
    {"is_floating_point", dtype_is_floating_point, nullptr,
     "Whether the dtype is a floating-point type.", nullptr},
    {"is_signed", dtype_is_signed, nullptr, "Whether the dtype holds negative values.", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};

PyMethodDef dtype_methods[] = {
    {"__reduce__", dtype_reduce, METH_NOARGS, nullptr},
    {nullptr, nullptr, 0, nullptr},
};

PyTypeObject dtype_type_object = [] {
  PyTypeObject type{PyVarObject_HEAD_INIT(nullptr, 0)};
  type.tp_name = "backplane.dtype";
  type.tp_basicsize = sizeof(DTypeObject);
  type.tp_flags = Py_TPFLAGS_DEFAULT;
  type.tp_doc = "The element type of a Tensor: backplane.float32, backplane.int64, ...";
  type.tp_repr = dtype_repr;
  type.tp_getset = dtype_getset;
  type.tp_methods = dtype_methods;
  return type;
}();

}  // namespace

PyTypeObject* dtype_type = &dtype_type_object;

bool add_dtype_type(PyObject* module) {
  if (PyType_Ready(&dtype_type_object) < 0) return false;
  if (PyModule_AddObjectRef(module, "dtype", reinterpret_cast<PyObject*>(&dtype_type_object)) < 0) {
    return false;
  }
  for (size_t k = 0; k < kCount; ++k) {
    DTypeObject* object = PyObject_New(DTypeObject, &dtype_type_object);
    if (object == nullptr) return false;
    object->dtype = kNames[k].dtype;
    object->name = kNames[k].name;
    objects[k] = object;  // lives as long as the process: the module never unloads
    for (const char* name : {kNames[k].name, kNames[k].alias}) {
      if (name == nullptr) continue;
      if (PyModule_AddObjectRef(module, name, reinterpret_cast<PyObject*>(object)) < 0) {
        return false;
      }
    }
  }
  return true;
}

DType unwrap_dtype(PyObject* object) { return as_dtype(object)->dtype; }

const char* python_dtype_name(DType dtype) { return kNames[index_of(dtype)].name; }

PyObject* wrap_dtype(DType dtype) {
  return Py_NewRef(reinterpret_cast<PyObject*>(objects[index_of(dtype)]));
}

}  // namespace bp::python
