// DLPack in Python: Tensor.__dlpack__ and __dlpack_device__ for consumers (numpy.from_dlpack,
// torch.from_dlpack), and bp.from_dlpack for producers, each sharing memory without a copy.
// Capsules follow DLPack 0.6: named "dltensor", renamed "used_dltensor" by the consumer that
// takes the DLManagedTensor over.
#include "tensor_parts.h"

#include "arg_parser.h"
#include "errors.h"
#include "gil.h"
#include "parts_support.h"
#include "python_tensor.h"

#include <backplane/backplane.h>
#include <backplane/dlpack.h>

#include <atomic>

namespace bp::python {
namespace {

constexpr const char* kCapsuleName = "dltensor";
constexpr const char* kUsedCapsuleName = "used_dltensor";

// What a capsule holds: the core's DLManagedTensor behind one whose deleter runs it at most
// once. A consumer that fails may call the deleter without renaming the capsule (PyTorch 1.13
// does for a device it cannot take), and the capsule must then not delete it again. The
// capsule and the consumer each hold a reference to this record; the last one frees it.
struct CapsuleExport {
  DLManagedTensor exposed;
  DLManagedTensor* exported;
  std::atomic<int> references{2};
  std::atomic<bool> deleted{false};

  void delete_exported() {
    if (!deleted.exchange(true) && exported->deleter != nullptr) exported->deleter(exported);
  }
  void release() {
    if (references.fetch_sub(1) == 1) delete this;
  }
};

void delete_from_consumer(DLManagedTensor* managed) {
  auto* record = static_cast<CapsuleExport*>(managed->manager_ctx);
  record->delete_exported();
  record->release();
}

void delete_capsule(PyObject* capsule) {
  const bool consumed = PyCapsule_IsValid(capsule, kUsedCapsuleName);
  // A destructor may run while an exception is being raised; keep it.
  PyObject* type = nullptr;
  PyObject* value = nullptr;
  PyObject* traceback = nullptr;
  PyErr_Fetch(&type, &value, &traceback);
  auto* managed = static_cast<DLManagedTensor*>(
      PyCapsule_GetPointer(capsule, consumed ? kUsedCapsuleName : kCapsuleName));
  if (managed == nullptr) {
    PyErr_WriteUnraisable(capsule);
  } else {
    auto* record = static_cast<CapsuleExport*>(managed->manager_ctx);
    if (!consumed && !record->deleted) {
      // No consumer took it: the capsule releases the consumer's share too.
      record->delete_exported();
      record->release();
    }
    record->release();
  }
  PyErr_Restore(type, value, traceback);
}

PyObject* tensor_dlpack(PyObject* self, PyObject* const* args, Py_ssize_t nargs,
                        PyObject* kwnames) {
  return guarded([&]() -> PyObject* {
    static constexpr Param params[] = {
        {.name = "self", .type = ParamType::Tensor},
        {.name = "stream", .type = ParamType::OptionalInt, .default_value = Default::none()},
    };
    static const ArgParser parser("__dlpack__", true,
                                  {Signature{"__dlpack__(Tensor self, int? stream=None)", params}});
    ParsedArgs parsed;
    if (parser.parse(self, args, nargs, kwnames, parsed) < 0) return nullptr;
    const Tensor& tensor = unwrap_tensor(self);
    // Backplane does not name its queues to other libraries: the consumer's stream, whatever
    // it is, sees the data once the device has finished the work queued so far.
    DLManagedTensor* managed = without_gil([&] {
      if (!tensor.device().is_cpu()) synchronize(tensor.device());
      return to_dlpack(tensor);
    });
    auto* record = new CapsuleExport{*managed, managed};
    record->exposed.manager_ctx = record;
    record->exposed.deleter = delete_from_consumer;
    PyObject* capsule = PyCapsule_New(&record->exposed, kCapsuleName, delete_capsule);
    if (capsule == nullptr) {
      record->delete_exported();
      delete record;
    }
    return capsule;
  });
}

PyObject* tensor_dlpack_device(PyObject* self, PyObject*) {
  return guarded([&] {
    const DLDevice device = dlpack_device(unwrap_tensor(self));
    return Py_BuildValue("(ii)", static_cast<int>(device.device_type),
                         static_cast<int>(device.device_id));
  });
}

// The tensor of an unused capsule, which it consumes.
Tensor tensor_from_capsule(PyObject* capsule) {
  auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, kCapsuleName));
  if (managed == nullptr) {
    PyErr_Clear();
    throw_python_error(PyExc_ValueError,
                       "from_dlpack(): the capsule is not an unused DLPack capsule (named "
                       "'dltensor'); each capsule can be consumed once, so call __dlpack__() "
                       "again for a new one");
  }
  if (PyCapsule_SetName(capsule, kUsedCapsuleName) != 0) throw PythonErrorSet();
  // from_dlpack owns `managed` from here on, and deletes it if it throws.
  return from_dlpack(managed);
}

PyObject* dlpack_method_name() {
  static PyObject* const name = PyUnicode_InternFromString("__dlpack__");
  return name;
}

// Calls object.__dlpack__() without arguments, as host producers (NumPy) require; a device
// producer then orders its data on its default stream. Null with a Python exception set on
// failure.
PyObject* call_dlpack(PyObject* object) {
  PyObject* capsule = PyObject_CallMethodNoArgs(object, dlpack_method_name());
  if (capsule != nullptr) return capsule;
  if (PyErr_ExceptionMatches(PyExc_AttributeError) &&
      PyObject_HasAttr(object, dlpack_method_name()) == 0) {
    PyErr_Clear();
    PyErr_Format(PyExc_TypeError,
                 "from_dlpack(): expected an object with __dlpack__ (a NumPy array, a PyTorch "
                 "tensor, ...) or a DLPack capsule, got %s",
                 Py_TYPE(object)->tp_name);
  }
  return nullptr;
}

// An object with __dlpack__ or a capsule: what from_dlpack and from_numpy take.
PyObject* shared_tensor(PyObject* object) {
  if (PyCapsule_CheckExact(object)) return wrap_tensor(tensor_from_capsule(object));
  if (is_tensor(object)) return wrap_tensor(unwrap_tensor(object).detach());
  return wrap_tensor(tensor_from_dlpack_object(object));
}

PyObject* py_from_dlpack(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  return guarded([&]() -> PyObject* {
    static constexpr Param params[] = {{.name = "ext_tensor", .type = ParamType::Object}};
    static const ArgParser parser("from_dlpack", false,
                                  {Signature{"from_dlpack(Object ext_tensor) -> Tensor", params}});
    ParsedArgs parsed;
    if (parser.parse(nullptr, args, nargs, kwnames, parsed) < 0) return nullptr;
    return shared_tensor(parsed.object(0));
  });
}

PyObject* py_from_numpy(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  return guarded([&]() -> PyObject* {
    static constexpr Param params[] = {{.name = "ndarray", .type = ParamType::Object}};
    static const ArgParser parser("from_numpy", false,
                                  {Signature{"from_numpy(Object ndarray) -> Tensor", params}});
    ParsedArgs parsed;
    if (parser.parse(nullptr, args, nargs, kwnames, parsed) < 0) return nullptr;
    return shared_tensor(parsed.object(0));
  });
}

}  // namespace

Tensor tensor_from_dlpack_object(PyObject* object) {
  PyObject* capsule = call_dlpack(object);
  if (capsule == nullptr) throw PythonErrorSet();
  struct Release {
    PyObject* object;
    ~Release() { Py_DECREF(object); }
  } release{capsule};
  if (!PyCapsule_CheckExact(capsule)) {
    PyErr_Format(PyExc_TypeError, "%s.__dlpack__() returned %s, not a DLPack capsule",
                 Py_TYPE(object)->tp_name, Py_TYPE(capsule)->tp_name);
    throw PythonErrorSet();
  }
  return tensor_from_capsule(capsule);
}

PyMethodDef tensor_dlpack_methods[] = {
    {"__dlpack__", as_method(tensor_dlpack), kFastcall,
     "__dlpack__(stream=None) -> PyCapsule\n\n"
     "A DLPack capsule ('dltensor') viewing the tensor's memory, for another library's\n"
     "from_dlpack. A device tensor's pending work finishes first, so any stream may read it."},
    {"__dlpack_device__", as_method(tensor_dlpack_device), METH_NOARGS,
     "__dlpack_device__() -> (int, int)\n\nThe DLPack device type and index of the tensor."},
    {nullptr, nullptr, 0, nullptr},
};

PyMethodDef dlpack_functions[] = {
    {"from_dlpack", as_method(py_from_dlpack), kFastcall,
     "from_dlpack(ext_tensor) -> Tensor\n\n"
     "A tensor sharing the memory of ext_tensor: an object with __dlpack__ (a NumPy array, a\n"
     "PyTorch tensor, ...) or a DLPack capsule, which it consumes. No copy is made."},
    {"from_numpy", as_method(py_from_numpy), kFastcall,
     "from_numpy(ndarray) -> Tensor\n\n"
     "A tensor sharing the memory of a NumPy array (through DLPack); from_dlpack's alias."},
    {nullptr, nullptr, 0, nullptr},
};

}  // namespace bp::python
