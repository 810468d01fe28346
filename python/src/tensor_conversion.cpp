// Tensor.to, cpu, numpy, tolist and item, and the element readers of parts_support.h.
#include "tensor_parts.h"

#include "arg_parser.h"
#include "device_object.h"
#include "dtype_object.h"
#include "errors.h"
#include "gil.h"
#include "parts_support.h"
#include "python_tensor.h"

#include <backplane/backplane.h>

#include <string>

namespace bp::python {

PyObject* python_value(const void* data, DType dtype) {
  switch (dtype) {
    case DType::Float32: return PyFloat_FromDouble(*static_cast<const float*>(data));
    case DType::Float64: return PyFloat_FromDouble(*static_cast<const double*>(data));
    case DType::Float16: return PyFloat_FromDouble(*static_cast<const Half*>(data));
    case DType::BFloat16: return PyFloat_FromDouble(*static_cast<const BFloat16*>(data));
    case DType::Int8: return PyLong_FromLong(*static_cast<const int8_t*>(data));
    case DType::UInt8: return PyLong_FromLong(*static_cast<const uint8_t*>(data));
    case DType::Int32: return PyLong_FromLong(*static_cast<const int32_t*>(data));
    case DType::Int64: return PyLong_FromLongLong(*static_cast<const int64_t*>(data));
    // Read as a byte: memory from elsewhere (DLPack) may hold bools other than 0 and 1.
    case DType::Bool: return PyBool_FromLong(*static_cast<const uint8_t*>(data) != 0);
  }
  PyErr_SetString(PyExc_SystemError, "python_value: unknown dtype");
  return nullptr;
}

namespace {

// The tensor itself when it is on the host, else a host copy (made without the GIL).
Tensor on_host(const Tensor& tensor) {
  if (tensor.device().is_cpu()) return tensor;
  return without_gil([&] { return tensor.cpu(); });
}

}  // namespace

PyObject* one_element_value(const Tensor& tensor, const char* function, PyObject* error_type) {
  const int64_t numel = tensor.numel();
  if (numel != 1) {
    PyErr_Format(error_type,
                 "%s(): only one element tensors can be converted to Python scalars, and this "
                 "one has %lld elements",
                 function, static_cast<long long>(numel));
    return nullptr;
  }
  const Tensor host = on_host(tensor);
  return python_value(host.const_data_ptr(), host.dtype());
}

namespace {

PyObject* tensor_cpu(PyObject* self, PyObject*) {
  return guarded([&]() -> PyObject* {
    const Tensor& tensor = unwrap_tensor(self);
    if (tensor.device().is_cpu()) {
      Py_INCREF(self);
      return self;
    }
    return wrap_tensor(without_gil([&] { return tensor.cpu(); }));
  });
}

// --- numpy ------------------------------------------------------------------------------------

// numpy.asarray, imported on first use. A plain pointer rather than a function-local static:
// importing may release the GIL, and a thread waiting on a static's guard while holding the GIL
// would deadlock with it.
PyObject* numpy_asarray() {
  static PyObject* function = nullptr;
  if (function != nullptr) return function;
  PyObject* numpy = PyImport_ImportModule("numpy");
  if (numpy == nullptr) return nullptr;
  PyObject* found = PyObject_GetAttrString(numpy, "asarray");
  Py_DECREF(numpy);
  if (found == nullptr) return nullptr;
  if (function == nullptr) {
    function = found;
  } else {
    Py_DECREF(found);
  }
  return function;
}

// NumPy's array interface typestr of a dtype NumPy has.
const char* numpy_typestr(DType dtype) {
  switch (dtype) {
    case DType::Float32: return "<f4";
    case DType::Float64: return "<f8";
    case DType::Float16: return "<f2";
    case DType::Int8: return "|i1";
    case DType::UInt8: return "|u1";
    case DType::Int32: return "<i4";
    case DType::Int64: return "<i8";
    case DType::Bool: return "|b1";
    case DType::BFloat16: return nullptr;
  }
  return nullptr;
}

PyObject* int_tuple(IntArrayRef values, int64_t scale) {
  PyObject* tuple = PyTuple_New(static_cast<Py_ssize_t>(values.size()));
  if (tuple == nullptr) return nullptr;
  for (size_t i = 0; i < values.size(); ++i) {
    PyObject* item = PyLong_FromLongLong(values[i] * scale);
    if (item == nullptr) {
      Py_DECREF(tuple);
      return nullptr;
    }
    PyTuple_SET_ITEM(tuple, static_cast<Py_ssize_t>(i), item);
  }
  return tuple;
}

// What numpy() hands NumPy: the array interface of a host tensor, and the tensor object, which
// the array keeps alive as its base. (NumPy 1.24's from_dlpack makes read-only arrays and takes
// no bools; PyTorch's numpy() gives writable arrays of every dtype NumPy has.)
struct HostArray {
  PyObject_HEAD
  PyObject* tensor;
};

PyTypeObject* host_array_type = nullptr;

void host_array_dealloc(PyObject* self) {
  PyTypeObject* type = Py_TYPE(self);
  Py_XDECREF(reinterpret_cast<HostArray*>(self)->tensor);
  type->tp_free(self);
  Py_DECREF(type);
}

PyObject* host_array_interface(PyObject* self, void*) {
  const Tensor& tensor = unwrap_tensor(reinterpret_cast<HostArray*>(self)->tensor);
  const auto element_size = static_cast<int64_t>(tensor.element_size());
  // NumPy refuses a null address, which an empty tensor may have; it reads nothing of an empty
  // array, so any aligned address serves.
  alignas(16) static char no_elements[16];
  void* data = tensor.numel() > 0 ? tensor.data_ptr() : no_elements;
  return Py_BuildValue("{s:N,s:s,s:(N,O),s:N,s:i}", "shape", int_tuple(tensor.sizes(), 1),
                       "typestr", numpy_typestr(tensor.dtype()), "data", PyLong_FromVoidPtr(data),
                       Py_False, "strides", int_tuple(tensor.strides(), element_size), "version",
                       3);
}

PyGetSetDef host_array_properties[] = {
    {"__array_interface__", host_array_interface, nullptr, nullptr, nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};

PyType_Slot host_array_slots[] = {
    {Py_tp_dealloc, reinterpret_cast<void*>(host_array_dealloc)},
    {Py_tp_getset, host_array_properties},
    {0, nullptr},
};

PyType_Spec host_array_spec = {
    "backplane._HostArray",
    sizeof(HostArray),
    0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION,
    host_array_slots,
};

// A NumPy array on the memory of the host tensor that `tensor_object` holds.
PyObject* shared_array(PyObject* tensor_object) {
  PyObject* asarray = numpy_asarray();
  if (asarray == nullptr) return nullptr;
  if (host_array_type == nullptr) {
    host_array_type = reinterpret_cast<PyTypeObject*>(PyType_FromSpec(&host_array_spec));
    if (host_array_type == nullptr) return nullptr;
  }
  PyObject* holder = host_array_type->tp_alloc(host_array_type, 0);
  if (holder == nullptr) return nullptr;
  Py_INCREF(tensor_object);
  reinterpret_cast<HostArray*>(holder)->tensor = tensor_object;
  PyObject* array = PyObject_CallOneArg(asarray, holder);
  Py_DECREF(holder);
  return array;
}

PyObject* tensor_numpy(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  return guarded([&]() -> PyObject* {
    static constexpr Param params[] = {
        {.name = "self", .type = ParamType::Tensor},
        {.name = "force",
         .type = ParamType::Bool,
         .keyword_only = true,
         .default_value = Default::boolean(false)},
    };
    static const ArgParser parser("numpy", true,
                                  {Signature{"numpy(Tensor self, *, bool force=False)", params}});
    ParsedArgs parsed;
    if (parser.parse(self, args, nargs, kwnames, parsed) < 0) return nullptr;
    const bool force = parsed.to_bool(1);
    const Tensor& tensor = unwrap_tensor(self);
    if (tensor.dtype() == kBFloat16) {
      throw_python_error(PyExc_TypeError,
                         "numpy(): NumPy has no bfloat16; convert first, as in "
                         "tensor.to(backplane.float32).numpy()");
    }
    if (force) {
      PyObject* host = wrap_tensor(without_gil([&] { return tensor.detach().cpu(); }));
      if (host == nullptr) return nullptr;
      PyObject* array = shared_array(host);
      Py_DECREF(host);
      return array;
    }
    if (tensor.requires_grad()) {
      throw_python_error(PyExc_RuntimeError,
                         "Can't call numpy() on Tensor that requires grad. Use "
                         "tensor.detach().numpy() instead.");
    }
    if (!tensor.device().is_cpu()) {
      const std::string device = tensor.device().str();
      PyErr_Format(PyExc_TypeError,
                   "can't convert %s device type tensor to numpy. Use Tensor.cpu() to copy the "
                   "tensor to host memory first.",
                   device.c_str());
      return nullptr;
    }
    return shared_array(self);
  });
}

// --- tolist and item ----------------------------------------------------------------------------

// Nested lists of the elements of `host` from dim `dim` on, starting at byte `offset`.
PyObject* nested_list(const Tensor& host, const char* data, size_t dim, int64_t offset) {
  const IntArrayRef sizes = host.sizes();
  if (dim == sizes.size()) return python_value(data + offset, host.dtype());
  const int64_t size = sizes[dim];
  const int64_t step = host.strides()[dim] * static_cast<int64_t>(host.element_size());
  PyObject* list = PyList_New(size);
  if (list == nullptr) return nullptr;
  for (int64_t i = 0; i < size; ++i) {
    PyObject* item = nested_list(host, data, dim + 1, offset + i * step);
    if (item == nullptr) {
      Py_DECREF(list);
      return nullptr;
    }
    PyList_SET_ITEM(list, i, item);
  }
  return list;
}

PyObject* tensor_tolist(PyObject* self, PyObject*) {
  return guarded([&]() -> PyObject* {
    const Tensor host = on_host(unwrap_tensor(self));
    const char* data = host.numel() > 0 ? static_cast<const char*>(host.const_data_ptr()) : nullptr;
    return nested_list(host, data, 0, 0);
  });
}

PyObject* tensor_item(PyObject* self, PyObject*) {
  return guarded(
      [&] { return one_element_value(unwrap_tensor(self), "item", PyExc_RuntimeError); });
}

}  // namespace

PyMethodDef tensor_conversion_methods[] = {
    {"cpu", as_method(tensor_cpu), METH_NOARGS,
     "cpu() -> Tensor\n\nThe tensor on the host: self itself when it already is."},
    {"numpy", as_method(tensor_numpy), kFastcall,
     "numpy(*, force=False) -> numpy.ndarray\n\n"
     "A writable NumPy array sharing the memory of a host tensor. A tensor that\n"
     "requires grad or is on a device is refused unless force=True, which detaches it and\n"
     "copies it to the host first."},
    {"tolist", as_method(tensor_tolist), METH_NOARGS,
     "tolist() -> list or number\n\n"
     "The elements as nested lists of Python bools, ints or floats (a number for a 0-dim "
     "tensor)."},
    {"item", as_method(tensor_item), METH_NOARGS,
     "item() -> number\n\nThe element of a one-element tensor as a Python bool, int or float."},
    {nullptr, nullptr, 0, nullptr},
};

}  // namespace bp::python
