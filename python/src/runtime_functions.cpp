// The runtime from Python: devices, default_device, synchronize, runtime_info (bp-info --json's
// data), load_plugin, manual_seed, _backend_counters, and bp.Event.
#include "tensor_parts.h"

#include "arg_parser.h"
#include "device_object.h"
#include "errors.h"
#include "gil.h"
#include "parts_support.h"

#include <backplane/backplane.h>

#include <algorithm>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace bp::python {
namespace {

// --- Python objects from the runtime's descriptions -------------------------------------------

// Owns a new reference; null-checked on construction so that builders can throw.
class Ref {
 public:
  explicit Ref(PyObject* object) : object_(object) {
    if (object_ == nullptr) throw PythonErrorSet();
  }
  ~Ref() { Py_XDECREF(object_); }
  Ref(const Ref&) = delete;
  Ref& operator=(const Ref&) = delete;

  PyObject* get() const { return object_; }
  PyObject* release() {
    PyObject* object = object_;
    object_ = nullptr;
    return object;
  }

 private:
  PyObject* object_;
};

// Plugins' names and messages may hold any bytes: invalid UTF-8 is replaced, never an error.
PyObject* text(std::string_view value) {
  return PyUnicode_DecodeUTF8(value.data(), static_cast<Py_ssize_t>(value.size()), "replace");
}

// File paths are the file system's bytes, as os.fsdecode reads them.
PyObject* path_text(const std::string& value) {
  return PyUnicode_DecodeFSDefaultAndSize(value.data(), static_cast<Py_ssize_t>(value.size()));
}

void set(PyObject* dict, const char* key, PyObject* value) {
  Ref owned(value);
  if (PyDict_SetItemString(dict, key, owned.get()) != 0) throw PythonErrorSet();
}

PyObject* text_list(const std::vector<std::string>& values) {
  Ref list(PyList_New(static_cast<Py_ssize_t>(values.size())));
  for (size_t i = 0; i < values.size(); ++i) {
    PyList_SET_ITEM(list.get(), static_cast<Py_ssize_t>(i), Ref(text(values[i])).release());
  }
  return list.release();
}

// What bp-info reads of a plugin besides its PluginInfo: its counters now, or why they could
// not be read.
struct PluginState {
  std::vector<BackendCounter> counters;
  std::string counters_error;
  std::vector<std::string> missing_ops;
};

PluginState read_state(const RuntimeInfo& runtime, const PluginInfo& plugin) {
  PluginState state;
  try {
    state.counters = backend_counters(plugin.name);
  } catch (const Error& e) {
    state.counters_error = e.what();
  }
  for (const std::string& op : runtime.kernel_ops) {
    if (std::find(plugin.ops.begin(), plugin.ops.end(), op) == plugin.ops.end()) {
      state.missing_ops.push_back(op);
    }
  }
  return state;
}

PyObject* counters_dict(const std::vector<BackendCounter>& counters) {
  Ref dict(PyDict_New());
  for (const BackendCounter& counter : counters) {
    set(dict.get(), counter.name.c_str(), PyLong_FromUnsignedLongLong(counter.value));
  }
  return dict.release();
}

// One plugin, with bp-info --json's keys and values.
PyObject* plugin_dict(const PluginInfo& plugin, const PluginState& state) {
  Ref dict(PyDict_New());
  PyObject* d = dict.get();
  set(d, "name", text(plugin.name));
  set(d, "path", path_text(plugin.path));
  set(d, "version", text(plugin.version));
  set(d, "abi", text(std::to_string(plugin.abi_major) + "." + std::to_string(plugin.abi_minor)));
  Ref devices(PyList_New(0));
  for (const DeviceInfo& device : plugin.devices) {
    Ref entry(PyDict_New());
    set(entry.get(), "device", text(device.device.str()));
    set(entry.get(), "name", text(device.name));
    set(entry.get(), "description", text(device.description));
    set(entry.get(), "total_memory", PyLong_FromUnsignedLongLong(device.total_memory));
    if (PyList_Append(devices.get(), entry.get()) != 0) throw PythonErrorSet();
  }
  set(d, "devices", devices.release());
  set(d, "device_note", text(plugin.device_note));
  set(d, "ops", text_list(plugin.ops));
  set(d, "missing_ops", text_list(state.missing_ops));
  Ref refused(PyList_New(0));
  for (const RefusedKernel& kernel : plugin.refused_kernels) {
    Ref entry(PyDict_New());
    set(entry.get(), "op", text(kernel.op));
    set(entry.get(), "reason", text(kernel.reason));
    if (PyList_Append(refused.get(), entry.get()) != 0) throw PythonErrorSet();
  }
  set(d, "refused_kernels", refused.release());
  set(d, "counters", counters_dict(state.counters));
  set(d, "counters_error", text(state.counters_error));
  set(d, "events", PyBool_FromLong(plugin.has_events));
  return dict.release();
}

PyObject* py_runtime_info(PyObject*, PyObject*) {
  return guarded([&]() -> PyObject* {
    RuntimeInfo runtime;
    std::vector<PluginState> states;
    without_gil([&] {
      runtime = bp::runtime_info();
      for (const PluginInfo& plugin : runtime.plugins) {
        states.push_back(read_state(runtime, plugin));
      }
    });
    Ref plugins(PyList_New(0));
    for (size_t i = 0; i < runtime.plugins.size(); ++i) {
      Ref plugin(plugin_dict(runtime.plugins[i], states[i]));
      if (PyList_Append(plugins.get(), plugin.get()) != 0) throw PythonErrorSet();
    }
    Ref failures(PyList_New(0));
    for (const PluginFailure& failure : runtime.failures) {
      Ref entry(PyDict_New());
      set(entry.get(), "path", path_text(failure.path));
      set(entry.get(), "reason", text(failure.reason));
      if (PyList_Append(failures.get(), entry.get()) != 0) throw PythonErrorSet();
    }
    Ref result(PyDict_New());
    set(result.get(), "plugins", plugins.release());
    set(result.get(), "failures", failures.release());
    set(result.get(), "default_device", text(runtime.default_device.str()));
    set(result.get(), "warnings", text_list(runtime.warnings));
    set(result.get(), "validation_findings", text_list(runtime.validation_findings));
    return result.release();
  });
}

PyObject* py_load_plugin(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  return guarded([&]() -> PyObject* {
    // A str, bytes or os.PathLike, as os.fspath takes it: PyUnicode_FSConverter checks it.
    static constexpr Param params[] = {{.name = "path", .type = ParamType::Object}};
    static const ArgParser parser("load_plugin", false,
                                  {Signature{"load_plugin(Object path) -> dict", params}});
    ParsedArgs parsed;
    if (parser.parse(nullptr, args, nargs, kwnames, parsed) < 0) return nullptr;
    PyObject* encoded = nullptr;
    if (PyUnicode_FSConverter(parsed.object(0), &encoded) == 0) throw PythonErrorSet();
    const Ref owned(encoded);
    const std::string path(PyBytes_AS_STRING(encoded),
                           static_cast<size_t>(PyBytes_GET_SIZE(encoded)));
    PluginInfo plugin;
    PluginState state;
    without_gil([&] {
      plugin = load_plugin(path);
      state = read_state(bp::runtime_info(), plugin);
    });
    return plugin_dict(plugin, state);
  });
}

PyObject* py_backend_counters(PyObject*, PyObject* const* args, Py_ssize_t nargs,
                              PyObject* kwnames) {
  return guarded([&]() -> PyObject* {
    static constexpr Param params[] = {{.name = "backend", .type = ParamType::Str}};
    static const ArgParser parser("_backend_counters", false,
                                  {Signature{"_backend_counters(str backend) -> dict", params}});
    ParsedArgs parsed;
    if (parser.parse(nullptr, args, nargs, kwnames, parsed) < 0) return nullptr;
    const std::string backend(parsed.string(0));
    const std::vector<BackendCounter> counters =
        without_gil([&] { return backend_counters(backend); });
    return counters_dict(counters);
  });
}

PyObject* py_devices(PyObject*, PyObject*) {
  return guarded([&]() -> PyObject* {
    const std::vector<Device> all = without_gil([] { return devices(); });
    Ref list(PyList_New(static_cast<Py_ssize_t>(all.size())));
    for (size_t i = 0; i < all.size(); ++i) {
      PyList_SET_ITEM(list.get(), static_cast<Py_ssize_t>(i), Ref(wrap_device(all[i])).release());
    }
    return list.release();
  });
}

PyObject* py_default_device(PyObject*, PyObject*) {
  return guarded([] { return wrap_device(without_gil([] { return default_device(); })); });
}

PyObject* py_synchronize(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  return guarded([&]() -> PyObject* {
    static constexpr Param params[] = {
        {.name = "device", .type = ParamType::OptionalDevice, .default_value = Default::none()},
    };
    static const ArgParser parser("synchronize", false,
                                  {Signature{"synchronize(Device? device=None)", params}});
    ParsedArgs parsed;
    if (parser.parse(nullptr, args, nargs, kwnames, parsed) < 0) return nullptr;
    const std::optional<Device> device = parsed.optional_device(0);
    without_gil([&] {
      if (device) {
        synchronize(*device);
        return;
      }
      for (const Device& each : devices()) synchronize(each);
    });
    Py_RETURN_NONE;
  });
}

PyObject* py_manual_seed(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  return guarded([&]() -> PyObject* {
    static constexpr Param params[] = {{.name = "seed", .type = ParamType::Int}};
    static const ArgParser parser("manual_seed", false,
                                  {Signature{"manual_seed(int seed)", params}});
    ParsedArgs parsed;
    if (parser.parse(nullptr, args, nargs, kwnames, parsed) < 0) return nullptr;
    // Read here rather than by to_int: seeds go up to 2**64, past int64.
    const Ref owned(PyNumber_Index(parsed.object(0)));
    PyObject* seed = owned.get();
    int overflow = 0;
    const long long value = PyLong_AsLongLongAndOverflow(seed, &overflow);
    uint64_t bits = static_cast<uint64_t>(value);
    if (overflow > 0) {
      bits = PyLong_AsUnsignedLongLong(seed);
      if (bits == static_cast<uint64_t>(-1) && PyErr_Occurred()) {
        PyErr_Clear();
        overflow = -1;
      }
    }
    if (overflow < 0) {
      throw_python_error(PyExc_ValueError,
                         "manual_seed(): the seed must lie in [-2**63, 2**64); negative seeds "
                         "count modulo 2**64");
    }
    without_gil([&] { manual_seed(bits); });
    Py_RETURN_NONE;
  });
}

// --- bp.Event -----------------------------------------------------------------------------------

struct PythonEvent {
  PyObject_HEAD
  Event* event;
};

PyTypeObject* event_type = nullptr;

Event& unwrap_event(PyObject* self) { return *reinterpret_cast<PythonEvent*>(self)->event; }

// Event(device=None), as the type's vectorcall, which the argument parser takes.
PyObject* event_vectorcall(PyObject* type_object, PyObject* const* args, size_t nargsf,
                           PyObject* kwnames) {
  return guarded([&]() -> PyObject* {
    static constexpr Param params[] = {
        {.name = "device", .type = ParamType::OptionalDevice, .default_value = Default::none()},
    };
    static const ArgParser parser("Event", false,
                                  {Signature{"Event(Device? device=None)", params}});
    ParsedArgs parsed;
    if (parser.parse(nullptr, args, PyVectorcall_NARGS(nargsf), kwnames, parsed) < 0) {
      return nullptr;
    }
    const std::optional<Device> given = parsed.optional_device(0);
    const Device device = given ? *given : without_gil([] { return default_device(); });
    auto event = std::make_unique<Event>(device);
    auto* type = reinterpret_cast<PyTypeObject*>(type_object);
    PyObject* self = type->tp_alloc(type, 0);
    if (self == nullptr) return nullptr;
    reinterpret_cast<PythonEvent*>(self)->event = event.release();
    return self;
  });
}

// Event.__new__(Event, ...), which Python calls with a tuple and a dict: the vectorcall over
// them.
PyObject* event_new(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  return PyVectorcall_Call(reinterpret_cast<PyObject*>(type), args, kwargs);
}

void event_dealloc(PyObject* self) {
  PyTypeObject* type = Py_TYPE(self);
  delete reinterpret_cast<PythonEvent*>(self)->event;
  type->tp_free(self);
  Py_DECREF(type);
}

PyObject* event_record(PyObject* self, PyObject*) {
  return guarded([&]() -> PyObject* {
    Event& event = unwrap_event(self);
    without_gil([&] { event.record(); });
    Py_RETURN_NONE;
  });
}

PyObject* event_synchronize(PyObject* self, PyObject*) {
  return guarded([&]() -> PyObject* {
    const Event& event = unwrap_event(self);
    without_gil([&] { event.synchronize(); });
    Py_RETURN_NONE;
  });
}

PyObject* event_query(PyObject* self, PyObject*) {
  return guarded([&] {
    const Event& event = unwrap_event(self);
    return PyBool_FromLong(without_gil([&] { return event.query(); }));
  });
}

PyObject* event_elapsed_time(PyObject* self, PyObject* const* args, Py_ssize_t nargs,
                             PyObject* kwnames) {
  return guarded([&]() -> PyObject* {
    static constexpr Param params[] = {
        {.name = "self", .type = ParamType::Object},
        {.name = "end_event", .type = ParamType::Object},
    };
    static const ArgParser parser(
        "elapsed_time", true,
        {Signature{"elapsed_time(Event self, Event end_event) -> float", params}});
    ParsedArgs parsed;
    if (parser.parse(self, args, nargs, kwnames, parsed) < 0) return nullptr;
    PyObject* end = parsed.object(1);
    if (!PyObject_TypeCheck(end, event_type)) {
      throw_argument_type_error("elapsed_time", "end_event", "a bp.Event", end);
    }
    const Event& start = unwrap_event(self);
    const Event& stop = unwrap_event(end);
    return PyFloat_FromDouble(without_gil([&] { return start.elapsed_ms(stop); }));
  });
}

PyObject* event_device(PyObject* self, void*) {
  return guarded([&] { return wrap_device(unwrap_event(self).device()); });
}

PyObject* event_recorded(PyObject* self, void*) {
  return PyBool_FromLong(unwrap_event(self).recorded());
}

PyObject* event_repr(PyObject* self) {
  const Event& event = unwrap_event(self);
  const std::string device = event.device().str();
  return PyUnicode_FromFormat("<backplane.Event device='%s' recorded=%s>", device.c_str(),
                              event.recorded() ? "True" : "False");
}

PyMethodDef event_methods[] = {
    {"record", as_method(event_record), METH_NOARGS,
     "record()\n\nMarks the point after the work queued on the device so far; recording again "
     "moves it."},
    {"synchronize", as_method(event_synchronize), METH_NOARGS,
     "synchronize()\n\nWaits until the work before the mark has finished."},
    {"query", as_method(event_query), METH_NOARGS,
     "query() -> bool\n\nWhether the work before the mark has finished (True when never "
     "recorded). Never waits."},
    {"elapsed_time", as_method(event_elapsed_time), kFastcall,
     "elapsed_time(end_event) -> float\n\nMilliseconds from this event's mark to end_event's, "
     "waiting for both."},
    {nullptr, nullptr, 0, nullptr},
};

PyGetSetDef event_properties[] = {
    {"device", event_device, nullptr, "The device whose queue the event marks.", nullptr},
    {"recorded", event_recorded, nullptr, "Whether record() was called.", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};

PyType_Slot event_slots[] = {
    {Py_tp_new, reinterpret_cast<void*>(event_new)},
    {Py_tp_dealloc, reinterpret_cast<void*>(event_dealloc)},
    {Py_tp_repr, reinterpret_cast<void*>(event_repr)},
    {Py_tp_methods, event_methods},
    {Py_tp_getset, event_properties},
    {Py_tp_doc, const_cast<char*>(
                    "Event(device=None)\n\n"
                    "A point in one device's queue of work (the default device's when none is\n"
                    "given), as CUDA events are: record() marks it, synchronize() waits for it,\n"
                    "elapsed_time(end) times the work between two marks.")},
    {0, nullptr},
};

PyType_Spec event_spec = {
    "backplane.Event", sizeof(PythonEvent), 0, Py_TPFLAGS_DEFAULT, event_slots,
};

}  // namespace

bool add_event_type(PyObject* module) {
  PyObject* type = PyType_FromSpec(&event_spec);
  if (type == nullptr) return false;
  event_type = reinterpret_cast<PyTypeObject*>(type);
  event_type->tp_vectorcall = event_vectorcall;
  const int added = PyModule_AddObjectRef(module, "Event", type);
  Py_DECREF(type);
  return added == 0;
}

PyMethodDef runtime_functions[] = {
    {"devices", as_method(py_devices), METH_NOARGS,
     "devices() -> list[device]\n\nEvery device of every loaded backend, the host first."},
    {"default_device", as_method(py_default_device), METH_NOARGS,
     "default_device() -> device\n\n"
     "The device factories use when none is given: BACKPLANE_DEFAULT_DEVICE, else the host."},
    {"synchronize", as_method(py_synchronize), kFastcall,
     "synchronize(device=None)\n\n"
     "Waits until the work queued on the device so far has finished, and raises the first\n"
     "failure among it; without a device, waits for every device."},
    {"runtime_info", as_method(py_runtime_info), METH_NOARGS,
     "runtime_info() -> dict\n\n"
     "What `bp-info --json` prints, as a dict: the loaded plugins (name, path, version, abi,\n"
     "devices, ops, missing_ops, refused_kernels, counters, events, ...), the plugins that\n"
     "failed to load and why, the default device, and warnings about BACKPLANE_* variables."},
    {"load_plugin", as_method(py_load_plugin), kFastcall,
     "load_plugin(path) -> dict\n\n"
     "Loads one more plugin now and returns its description, as runtime_info() lists it.\n"
     "A file already loaded is not loaded again. Raises bp.Error with the reason on failure."},
    {"manual_seed", as_method(py_manual_seed), kFastcall,
     "manual_seed(seed)\n\nSeeds the generator of rand and randn (and their _like forms)."},
    {"_backend_counters", as_method(py_backend_counters), kFastcall,
     "_backend_counters(backend) -> dict\n\n"
     "The numbers the loaded backend named backend (\"cpu\") reports about itself now."},
    {nullptr, nullptr, 0, nullptr},
};

}  // namespace bp::python
