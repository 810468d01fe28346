#include "python_tensor.h"

#include "arg_parser.h"
#include "device_object.h"
#include "dtype_object.h"
#include "errors.h"
#include "python_functions.h"
#include "tensor_parts.h"

#include <cstdint>
#include <new>
#include <vector>

namespace bp::python {
namespace {

PythonTensor* as_tensor(PyObject* self) { return reinterpret_cast<PythonTensor*>(self); }
const Tensor& tensor_of(PyObject* self) { return as_tensor(self)->tensor; }

void tensor_dealloc(PyObject* self) {
  as_tensor(self)->tensor.~Tensor();
  Py_TYPE(self)->tp_free(self);
}

PyObject* int_tuple(IntArrayRef values) {
  PyObject* tuple = PyTuple_New(static_cast<Py_ssize_t>(values.size()));
  if (tuple == nullptr) return nullptr;
  for (size_t k = 0; k < values.size(); ++k) {
    PyObject* item = PyLong_FromLongLong(values[k]);
    if (item == nullptr) {
      Py_DECREF(tuple);
      return nullptr;
    }
    PyTuple_SET_ITEM(tuple, static_cast<Py_ssize_t>(k), item);
  }
  return tuple;
}

// The tensor's text comes from backplane._tensor_str, which formats it as PyTorch does.
PyObject* tensor_str(PyObject* self) {
  static PyObject* format = nullptr;  // kept for the life of the process
  if (format == nullptr) {
    PyObject* module = PyImport_ImportModule("backplane._tensor_str");
    if (module == nullptr) return nullptr;
    format = PyObject_GetAttrString(module, "_str");
    Py_DECREF(module);
    if (format == nullptr) return nullptr;
  }
  return PyObject_CallOneArg(format, self);
}

Py_ssize_t tensor_length(PyObject* self) {
  const Tensor& tensor = tensor_of(self);
  if (tensor.dim() == 0) {
    PyErr_SetString(PyExc_TypeError, "len() of a 0-d tensor");
    return -1;
  }
  return static_cast<Py_ssize_t>(tensor.sizes()[0]);
}

// Over the first dimension: x[0], x[1], ... made up front, as PyTorch does.
PyObject* tensor_iter(PyObject* self) {
  const Tensor& tensor = tensor_of(self);
  if (tensor.dim() == 0) {
    PyErr_SetString(PyExc_TypeError, "iteration over a 0-d tensor");
    return nullptr;
  }
  const auto n = static_cast<Py_ssize_t>(tensor.sizes()[0]);
  PyObject* items = PyTuple_New(n);
  if (items == nullptr) return nullptr;
  for (Py_ssize_t k = 0; k < n; ++k) {
    PyObject* index = PyLong_FromSsize_t(k);
    PyObject* item = index == nullptr ? nullptr : PyObject_GetItem(self, index);
    Py_XDECREF(index);
    if (item == nullptr) {
      Py_DECREF(items);
      return nullptr;
    }
    PyTuple_SET_ITEM(items, k, item);
  }
  PyObject* iterator = PyObject_GetIter(items);
  Py_DECREF(items);
  return iterator;
}

// By identity, as PyTorch's tensors: == compares elements, so equal tensors are not one key.
Py_hash_t tensor_hash(PyObject* self) {
  const auto address = reinterpret_cast<uintptr_t>(self);
  const auto hash = static_cast<Py_hash_t>((address >> 4) | (address << (8 * sizeof(void*) - 4)));
  return hash == -1 ? -2 : hash;
}

PyObject* get_shape(PyObject* self, void*) { return int_tuple(tensor_of(self).sizes()); }
PyObject* get_dtype(PyObject* self, void*) { return wrap_dtype(tensor_of(self).dtype()); }
PyObject* get_device(PyObject* self, void*) { return wrap_device(tensor_of(self).device()); }
PyObject* get_ndim(PyObject* self, void*) { return PyLong_FromLongLong(tensor_of(self).dim()); }
PyObject* get_is_cpu(PyObject* self, void*) {
  return PyBool_FromLong(tensor_of(self).device().is_cpu());
}
PyObject* get_is_cuda(PyObject* self, void*) {
  return guarded([&] { return PyBool_FromLong(tensor_of(self).device().type_name() == "cuda"); });
}

PyGetSetDef own_properties[] = {
    {"shape", get_shape, nullptr, "The size of each dimension, as a tuple.", nullptr},
    {"dtype", get_dtype, nullptr, "The element type.", nullptr},
    {"device", get_device, nullptr, "The device that holds the elements.", nullptr},
    {"ndim", get_ndim, nullptr, "The number of dimensions.", nullptr},
    {"is_cpu", get_is_cpu, nullptr, "Whether the tensor is on the host.", nullptr},
    {"is_cuda", get_is_cuda, nullptr, "Whether the tensor is on a CUDA device.", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};

// size(dim=None) and stride(dim=None): the tuple, or one dimension's value.
template <bool kSizes>
PyObject* size_or_stride(PyObject* self, PyObject* const* args, Py_ssize_t nargs,
                         PyObject* kwnames) {
  return guarded([&]() -> PyObject* {
    static constexpr Param params[] = {
        {"self", ParamType::Tensor},
        {"dim", ParamType::OptionalInt, false, Default::none()},
    };
    static const ArgParser parser(kSizes ? "size" : "stride", /*is_method=*/true,
                                  {Signature{kSizes ? "size(Tensor self, int? dim=None) -> int[]"
                                                    : "stride(Tensor self, int? dim=None) -> int[]",
                                             params}});
    ParsedArgs parsed;
    if (parser.parse(self, args, nargs, kwnames, parsed) < 0) return nullptr;
    const Tensor& tensor = tensor_of(self);
    const IntArrayRef values = kSizes ? tensor.sizes() : tensor.strides();
    const std::optional<int64_t> dim = parsed.optional_int(1);
    if (!dim) return int_tuple(values);
    const auto rank = static_cast<int64_t>(values.size());
    if (*dim < -rank || *dim >= rank || rank == 0) {
      PyErr_Format(PyExc_IndexError,
                   "%s(): dimension %lld is out of range for a tensor of %lld dimension(s)%s",
                   parser.python_name(), static_cast<long long>(*dim), static_cast<long long>(rank),
                   rank == 0 ? "" : " (valid: -ndim to ndim - 1)");
      return nullptr;
    }
    return PyLong_FromLongLong(values[static_cast<size_t>(*dim < 0 ? *dim + rank : *dim)]);
  });
}

PyObject* method_numel(PyObject* self, PyObject*) {
  return PyLong_FromLongLong(tensor_of(self).numel());
}
PyObject* method_dim(PyObject* self, PyObject*) {
  return PyLong_FromLongLong(tensor_of(self).dim());
}
PyObject* method_is_contiguous(PyObject* self, PyObject*) {
  return PyBool_FromLong(tensor_of(self).is_contiguous());
}
PyObject* method_element_size(PyObject* self, PyObject*) {
  return PyLong_FromSize_t(tensor_of(self).element_size());
}
PyObject* method_storage_offset(PyObject* self, PyObject*) {
  return PyLong_FromLongLong(tensor_of(self).storage_offset());
}
PyObject* method_data_ptr(PyObject* self, PyObject*) {
  return guarded([&] { return PyLong_FromVoidPtr(tensor_of(self).data_ptr()); });
}

PyMethodDef own_methods[] = {
    {"size", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(size_or_stride<true>)),
     METH_FASTCALL | METH_KEYWORDS,
     "size(dim=None) -> tuple or int\n\nThe size of every dimension, or of dimension `dim`."},
    {"stride", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(size_or_stride<false>)),
     METH_FASTCALL | METH_KEYWORDS,
     "stride(dim=None) -> tuple or int\n\nThe stride of every dimension (in elements), or of "
     "dimension `dim`."},
    {"numel", method_numel, METH_NOARGS, "numel() -> int\n\nThe number of elements."},
    {"dim", method_dim, METH_NOARGS, "dim() -> int\n\nThe number of dimensions."},
    {"is_contiguous", method_is_contiguous, METH_NOARGS,
     "is_contiguous() -> bool\n\nWhether the elements lie in row-major order with no gaps."},
    {"element_size", method_element_size, METH_NOARGS,
     "element_size() -> int\n\nBytes per element."},
    {"storage_offset", method_storage_offset, METH_NOARGS,
     "storage_offset() -> int\n\nThe offset of the first element in the storage, in elements."},
    {"data_ptr", method_data_ptr, METH_NOARGS,
     "data_ptr() -> int\n\nThe host address of the first element (host tensors only)."},
    {nullptr, nullptr, 0, nullptr},
};

void append_table(std::vector<PyMethodDef>& all, const PyMethodDef* table) {
  for (; table->ml_name != nullptr; ++table) all.push_back(*table);
}

void append_table(std::vector<PyGetSetDef>& all, const PyGetSetDef* table) {
  for (; table->name != nullptr; ++table) all.push_back(*table);
}

PySequenceMethods tensor_sequence_methods = [] {
  PySequenceMethods methods{};
  methods.sq_length = tensor_length;
  return methods;
}();

PyTypeObject tensor_type_object = [] {
  PyTypeObject type{PyVarObject_HEAD_INIT(nullptr, 0)};
  type.tp_name = "backplane.Tensor";
  type.tp_basicsize = sizeof(PythonTensor);
  type.tp_flags = Py_TPFLAGS_DEFAULT;
  type.tp_doc =
      "A multi-dimensional array of one dtype on one device. Make one with backplane.tensor(), "
      "the factories (zeros, ones, randn, ...) or backplane.from_dlpack().";
  type.tp_dealloc = tensor_dealloc;
  type.tp_repr = tensor_str;
  type.tp_str = tensor_str;
  type.tp_hash = tensor_hash;
  type.tp_iter = tensor_iter;
  type.tp_as_number = &tensor_number_methods;
  type.tp_as_sequence = &tensor_sequence_methods;
  type.tp_as_mapping = &tensor_mapping_methods;
  type.tp_richcompare = tensor_richcompare;
  return type;
}();

}  // namespace

PyTypeObject* tensor_type = &tensor_type_object;

PyObject* wrap_tensor(Tensor tensor) {
  if (!tensor.defined()) Py_RETURN_NONE;
  PythonTensor* object = PyObject_New(PythonTensor, &tensor_type_object);
  if (object == nullptr) return nullptr;
  new (&object->tensor) Tensor(std::move(tensor));
  return reinterpret_cast<PyObject*>(object);
}

bool add_tensor_type(PyObject* module) {
  // Written methods first: where a generated method has the same name (to, contiguous), the
  // type keeps the first one it is given.
  static std::vector<PyMethodDef> methods;
  for (const PyMethodDef* table : {own_methods, tensor_conversion_methods, tensor_dlpack_methods,
                                   tensor_autograd_methods, generated_tensor_methods}) {
    append_table(methods, table);
  }
  methods.push_back({nullptr, nullptr, 0, nullptr});
  static std::vector<PyGetSetDef> properties;
  for (const PyGetSetDef* table : {own_properties, tensor_autograd_properties}) {
    append_table(properties, table);
  }
  properties.push_back({nullptr, nullptr, nullptr, nullptr, nullptr});
  tensor_type_object.tp_methods = methods.data();
  tensor_type_object.tp_getset = properties.data();
  if (PyType_Ready(&tensor_type_object) < 0) return false;

  // NumPy defers `array + tensor` to Tensor's reflected operators when this is higher than the
  // array's own.
  PyObject* priority = PyFloat_FromDouble(1000.0);
  if (priority == nullptr ||
      PyDict_SetItemString(tensor_type_object.tp_dict, "__array_priority__", priority) < 0) {
    Py_XDECREF(priority);
    return false;
  }
  Py_DECREF(priority);
  PyType_Modified(&tensor_type_object);

  if (PyModule_AddObjectRef(module, "Tensor", reinterpret_cast<PyObject*>(&tensor_type_object)) <
      0) {
    return false;
  }
  return true;
}

}  // namespace bp::python
