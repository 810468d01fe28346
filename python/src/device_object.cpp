#include "device_object.h"

#include "arg_parser.h"
#include "errors.h"

#include <string>

namespace bp::python {
namespace {

struct DeviceObject {
  PyObject_HEAD
  Device device;
};

Device& device_of(PyObject* self) { return reinterpret_cast<DeviceObject*>(self)->device; }

// bp::Device's parse, with its bp::Error as a ValueError that starts with `what`; nullopt when
// the error is set.
std::optional<Device> parse(std::string_view spec, const char* what) {
  try {
    return Device(spec);
  } catch (const bp::Error& e) {
    PyErr_Format(PyExc_ValueError, "%s: %s", what, e.what());
  } catch (...) {
    set_python_error_from_current_exception();
  }
  return std::nullopt;
}

// device(type, index=None), as the type's vectorcall, which the argument parser takes. The
// arguments are read here, where the messages can show what a device string looks like.
PyObject* device_vectorcall(PyObject* type_object, PyObject* const* args, size_t nargsf,
                            PyObject* kwnames) {
  return guarded([&]() -> PyObject* {
    static constexpr Param params[] = {
        {.name = "type", .type = ParamType::Object},
        {.name = "index", .type = ParamType::Object, .default_value = Default::none()},
    };
    static const ArgParser parser("device", false,
                                  {Signature{"device(Object type, int? index=None)", params}});
    ParsedArgs parsed;
    if (parser.parse(nullptr, args, PyVectorcall_NARGS(nargsf), kwnames, parsed) < 0) {
      return nullptr;
    }
    PyObject* spec = parsed.object(0);
    PyObject* index = parsed.object(1);
    if (is_device(spec) && index == Py_None) return Py_NewRef(spec);
    if (!PyUnicode_Check(spec)) {
      PyErr_Format(PyExc_TypeError,
                   "device(): argument 'type' must be str (\"cuda\", \"cuda:1\") or device, not %s",
                   Py_TYPE(spec)->tp_name);
      return nullptr;
    }
    const char* text = PyUnicode_AsUTF8(spec);
    if (text == nullptr) return nullptr;
    std::string full = text;
    if (index != Py_None) {
      if (!PyLong_Check(index) || PyBool_Check(index)) {
        PyErr_Format(PyExc_TypeError, "device(): argument 'index' must be int or None, not %s",
                     Py_TYPE(index)->tp_name);
        return nullptr;
      }
      if (full.find(':') != std::string::npos) {
        PyErr_Format(PyExc_ValueError,
                     "device(): '%s' already has an index; give the index either in the string "
                     "or as 'index', not both",
                     text);
        return nullptr;
      }
      const long long value = PyLong_AsLongLong(index);
      if (value == -1 && PyErr_Occurred()) return nullptr;
      if (value < 0) {
        PyErr_Format(PyExc_ValueError, "device(): argument 'index' must not be negative, got %lld",
                     value);
        return nullptr;
      }
      full += ":" + std::to_string(value);
    }
    const std::optional<Device> device = parse(full, "device()");
    if (!device) return nullptr;
    auto* type = reinterpret_cast<PyTypeObject*>(type_object);
    PyObject* self = type->tp_alloc(type, 0);
    if (self != nullptr) device_of(self) = *device;
    return self;
  });
}

// device.__new__(device, ...), which Python calls with a tuple and a dict: the vectorcall over
// them.
PyObject* device_new(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  return PyVectorcall_Call(reinterpret_cast<PyObject*>(type), args, kwargs);
}

PyObject* device_str(PyObject* self) {
  return guarded([&] { return PyUnicode_FromString(device_of(self).str().c_str()); });
}

PyObject* device_repr(PyObject* self) {
  return guarded([&] {
    const Device device = device_of(self);
    const std::string type(device.type_name());
    if (device.is_cpu() && device.index() == 0) {
      return PyUnicode_FromFormat("device(type='%s')", type.c_str());
    }
    return PyUnicode_FromFormat("device(type='%s', index=%d)", type.c_str(),
                                static_cast<int>(device.index()));
  });
}

PyObject* device_type_name(PyObject* self, void*) {
  return guarded([&] {
    const std::string_view name = device_of(self).type_name();
    return PyUnicode_FromStringAndSize(name.data(), static_cast<Py_ssize_t>(name.size()));
  });
}

PyObject* device_index(PyObject* self, void*) { return PyLong_FromLong(device_of(self).index()); }

Py_hash_t device_hash(PyObject* self) {
  const Device device = device_of(self);
  const Py_hash_t hash = (static_cast<Py_hash_t>(device.type()) << 16) + device.index() + 1;
  return hash == -1 ? -2 : hash;
}

// Equal to a device or to a string naming the same device; a string that names none is simply
// not equal.
PyObject* device_richcompare(PyObject* self, PyObject* other, int op) {
  if (op != Py_EQ && op != Py_NE) Py_RETURN_NOTIMPLEMENTED;
  std::optional<Device> right;
  if (is_device(other)) {
    right = device_of(other);
  } else if (PyUnicode_Check(other)) {
    const char* text = PyUnicode_AsUTF8(other);
    if (text == nullptr) return nullptr;
    try {
      right = Device(std::string_view(text));
    } catch (const bp::Error&) {
      right = std::nullopt;
    } catch (...) {
      set_python_error_from_current_exception();
      return nullptr;
    }
  } else {
    Py_RETURN_NOTIMPLEMENTED;
  }
  const bool equal = right && *right == device_of(self);
  return PyBool_FromLong(op == Py_EQ ? equal : !equal);
}

PyObject* device_reduce(PyObject* self, PyObject*) {
  return guarded([&] {
    const std::string text = device_of(self).str();
    return Py_BuildValue("O(s)", reinterpret_cast<PyObject*>(Py_TYPE(self)), text.c_str());
  });
}

PyGetSetDef device_getset[] = {
    {"type", device_type_name, nullptr, "The backend's name: 'cpu', 'cuda', 'opencl', ...",
     nullptr},
    {"index", device_index, nullptr, "The device's index among its backend's devices.", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};

PyMethodDef device_methods[] = {
    {"__reduce__", device_reduce, METH_NOARGS, nullptr},
    {nullptr, nullptr, 0, nullptr},
};

PyTypeObject device_type_object = [] {
  PyTypeObject type{PyVarObject_HEAD_INIT(nullptr, 0)};
  type.tp_name = "backplane.device";
  type.tp_basicsize = sizeof(DeviceObject);
  type.tp_flags = Py_TPFLAGS_DEFAULT;
  type.tp_doc =
      "device(type, index=None): a device of a loaded backend, from a string such as 'cpu', "
      "'cuda' or 'opencl:1', or a type and an index.";
  type.tp_new = device_new;
  type.tp_vectorcall = device_vectorcall;
  type.tp_repr = device_repr;
  type.tp_str = device_str;
  type.tp_hash = device_hash;
  type.tp_richcompare = device_richcompare;
  type.tp_getset = device_getset;
  type.tp_methods = device_methods;
  return type;
}();

}  // namespace

PyTypeObject* device_type = &device_type_object;

bool add_device_type(PyObject* module) {
  if (PyType_Ready(&device_type_object) < 0) return false;
  if (PyModule_AddObjectRef(module, "device", reinterpret_cast<PyObject*>(&device_type_object)) <
      0) {
    return false;
  }
  return true;
}

PyObject* wrap_device(Device device) {
  PyObject* self = device_type_object.tp_alloc(&device_type_object, 0);
  if (self != nullptr) device_of(self) = device;
  return self;
}

Device device_from_python(PyObject* object, const char* what) {
  if (is_device(object)) return device_of(object);
  if (!PyUnicode_Check(object)) {
    PyErr_Format(PyExc_TypeError, "%s must be device or str (such as 'cuda:0'), not %s", what,
                 Py_TYPE(object)->tp_name);
    throw PythonErrorSet();
  }
  Py_ssize_t size = 0;
  const char* text = PyUnicode_AsUTF8AndSize(object, &size);
  if (text == nullptr) throw PythonErrorSet();
  const std::optional<Device> device =
      parse(std::string_view(text, static_cast<size_t>(size)), what);
  if (!device) throw PythonErrorSet();
  return *device;
}

}  // namespace bp::python
