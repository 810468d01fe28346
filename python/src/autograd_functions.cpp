// Autograd from Python: Tensor's requires_grad, grad, is_leaf, grad_fn and _version, its
// requires_grad_, backward and detach, and the module's grad mode, grad and backward, with
// PyTorch's names and meaning over bp's autograd (docs/autograd.md).
#include "tensor_parts.h"

#include "arg_parser.h"
#include "errors.h"
#include "gil.h"
#include "parts_support.h"
#include "python_tensor.h"

#include <backplane/backplane.h>

#include <cstdint>
#include <memory>
#include <new>
#include <string>
#include <vector>

namespace bp::python {
namespace {

// --- grad_fn objects
// ------------------------------------------------------------------------------

// A node of the graph, as grad_fn and next_functions show it: repr "<AddBackward0 object>".
struct PythonNode {
  PyObject_HEAD
  std::shared_ptr<autograd::Node> node;
};

PyTypeObject* node_type = nullptr;

const std::shared_ptr<autograd::Node>& unwrap_node(PyObject* self) {
  return reinterpret_cast<PythonNode*>(self)->node;
}

void node_dealloc(PyObject* self) {
  PyTypeObject* type = Py_TYPE(self);
  reinterpret_cast<PythonNode*>(self)->node.~shared_ptr();
  type->tp_free(self);
  Py_DECREF(type);
}

PyObject* node_repr(PyObject* self) {
  const std::string name(unwrap_node(self)->name());
  return PyUnicode_FromFormat("<%s object>", name.c_str());
}

PyObject* node_name(PyObject* self, PyObject*) {
  const std::string_view name = unwrap_node(self)->name();
  return PyUnicode_FromStringAndSize(name.data(), static_cast<Py_ssize_t>(name.size()));
}

PyObject* wrap_node(const std::shared_ptr<autograd::Node>& node);

// ((node or None, input_nr), ...): where each input's gradient goes.
PyObject* node_next_functions(PyObject* self, void*) {
  const std::vector<autograd::Edge>& edges = unwrap_node(self)->next_edges();
  PyObject* result = PyTuple_New(static_cast<Py_ssize_t>(edges.size()));
  if (result == nullptr) return nullptr;
  for (size_t i = 0; i < edges.size(); ++i) {
    PyObject* entry = Py_BuildValue("(NI)", wrap_node(edges[i].function), edges[i].input_nr);
    if (entry == nullptr) {
      Py_DECREF(result);
      return nullptr;
    }
    PyTuple_SET_ITEM(result, static_cast<Py_ssize_t>(i), entry);
  }
  return result;
}

// Two objects for one node compare equal, as PyTorch's grad_fn objects do (`is` there).
PyObject* node_richcompare(PyObject* self, PyObject* other, int op) {
  if (!PyObject_TypeCheck(other, node_type) || (op != Py_EQ && op != Py_NE)) {
    Py_RETURN_NOTIMPLEMENTED;
  }
  const bool same = unwrap_node(self) == unwrap_node(other);
  return PyBool_FromLong(op == Py_EQ ? same : !same);
}

Py_hash_t node_hash(PyObject* self) {
  // Objects are aligned, so the low bits carry nothing; rotate them out, as Python hashes
  // pointers. -1 means an error to Python.
  const auto bits = reinterpret_cast<uintptr_t>(unwrap_node(self).get());
  const auto hash = static_cast<Py_hash_t>((bits >> 4) | (bits << (8 * sizeof(bits) - 4)));
  return hash == -1 ? -2 : hash;
}

PyMethodDef node_methods[] = {
    {"name", as_method(node_name), METH_NOARGS,
     "name() -> str\n\nThe node's type, such as \"AddBackward0\"."},
    {nullptr, nullptr, 0, nullptr},
};

PyGetSetDef node_properties[] = {
    {"next_functions", node_next_functions, nullptr,
     "((node or None, input_nr), ...): the nodes the gradients of the inputs flow to.", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};

PyType_Slot node_slots[] = {
    {Py_tp_dealloc, reinterpret_cast<void*>(node_dealloc)},
    {Py_tp_repr, reinterpret_cast<void*>(node_repr)},
    {Py_tp_richcompare, reinterpret_cast<void*>(node_richcompare)},
    {Py_tp_hash, reinterpret_cast<void*>(node_hash)},
    {Py_tp_methods, node_methods},
    {Py_tp_getset, node_properties},
    {Py_tp_doc, const_cast<char*>("A recorded op of the autograd graph (Tensor.grad_fn).")},
    {0, nullptr},
};

PyType_Spec node_spec = {
    "backplane.autograd.Node",
    sizeof(PythonNode),
    0,
    // Made only from C++: Python cannot create or subclass one.
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION,
    node_slots,
};

PyObject* wrap_node(const std::shared_ptr<autograd::Node>& node) {
  if (!node) Py_RETURN_NONE;
  if (node_type == nullptr) {
    node_type = reinterpret_cast<PyTypeObject*>(PyType_FromSpec(&node_spec));
    if (node_type == nullptr) return nullptr;
  }
  PyObject* self = node_type->tp_alloc(node_type, 0);
  if (self == nullptr) return nullptr;
  new (&reinterpret_cast<PythonNode*>(self)->node) std::shared_ptr<autograd::Node>(node);
  return self;
}

// --- Tensor properties
// ----------------------------------------------------------------------------

// The property setters' int result: 0, or -1 with the Python exception set.
template <typename Body>
int guarded_setter(Body&& body) noexcept {
  PyObject* done = guarded([&]() -> PyObject* {
    body();
    Py_RETURN_NONE;
  });
  if (done == nullptr) return -1;
  Py_DECREF(done);
  return 0;
}

[[noreturn]] void throw_cannot_delete(const char* property) {
  PyErr_Format(PyExc_TypeError, "cannot delete the %s property", property);
  throw PythonErrorSet();
}

PyObject* get_requires_grad(PyObject* self, void*) {
  return guarded([&] { return PyBool_FromLong(unwrap_tensor(self).requires_grad()); });
}

int set_requires_grad(PyObject* self, PyObject* value, void*) {
  return guarded_setter([&] {
    if (value == nullptr) throw_cannot_delete("requires_grad");
    if (!PyBool_Check(value)) {
      throw_argument_type_error("requires_grad", "value", "bool", value);
    }
    Tensor tensor = unwrap_tensor(self);
    tensor.requires_grad_(value == Py_True);
  });
}

PyObject* get_grad(PyObject* self, void*) {
  return guarded([&] { return wrap_tensor(unwrap_tensor(self).grad()); });
}

// x.grad = g: g must look like x (shape, dtype, device), as PyTorch checks; None or `del`
// drops it.
int set_grad(PyObject* self, PyObject* value, void*) {
  return guarded_setter([&] {
    Tensor tensor = unwrap_tensor(self);
    if (value == nullptr || value == Py_None) {
      tensor.mutable_grad() = Tensor();
      return;
    }
    if (!is_tensor(value)) throw_argument_type_error("grad", "value", "a Tensor or None", value);
    const Tensor& grad = unwrap_tensor(value);
    if (grad.sizes() != tensor.sizes()) {
      throw_python_error(PyExc_RuntimeError,
                         "assigned grad has data of a different size: it must have the "
                         "tensor's shape");
    }
    if (grad.dtype() != tensor.dtype()) {
      throw_python_error(PyExc_RuntimeError,
                         "assigned grad has data of a different type: it must have the "
                         "tensor's dtype");
    }
    if (grad.device() != tensor.device()) {
      throw_python_error(PyExc_RuntimeError,
                         "assigned grad has data located on a different device: it must be on "
                         "the tensor's device");
    }
    tensor.mutable_grad() = grad;
  });
}

PyObject* get_is_leaf(PyObject* self, void*) {
  return guarded([&] { return PyBool_FromLong(unwrap_tensor(self).is_leaf()); });
}

PyObject* get_grad_fn(PyObject* self, void*) {
  return guarded([&] { return wrap_node(unwrap_tensor(self).grad_fn()); });
}

PyObject* get_version(PyObject* self, void*) {
  return guarded([&] { return PyLong_FromUnsignedLongLong(unwrap_tensor(self)._version()); });
}

// --- Tensor methods
// -------------------------------------------------------------------------------

// retain_graph=None means False: Backplane has no create_graph for it to follow.
constexpr bool kRetainGraphByDefault = false;

PyObject* tensor_requires_grad_(PyObject* self, PyObject* const* args, Py_ssize_t nargs,
                                PyObject* kwnames) {
  return guarded([&]() -> PyObject* {
    static constexpr Param params[] = {
        {.name = "self", .type = ParamType::Tensor},
        {.name = "requires_grad", .type = ParamType::Bool, .default_value = Default::boolean(true)},
    };
    static const ArgParser parser(
        "requires_grad_", true,
        {Signature{"requires_grad_(Tensor self, bool requires_grad=True) -> Tensor", params}});
    ParsedArgs parsed;
    if (parser.parse(self, args, nargs, kwnames, parsed) < 0) return nullptr;
    const bool requires_grad = parsed.to_bool(1);
    Tensor tensor = unwrap_tensor(self);
    tensor.requires_grad_(requires_grad);
    Py_INCREF(self);
    return self;
  });
}

PyObject* tensor_backward(PyObject* self, PyObject* const* args, Py_ssize_t nargs,
                          PyObject* kwnames) {
  return guarded([&]() -> PyObject* {
    static constexpr Param params[] = {
        {.name = "self", .type = ParamType::Tensor},
        {.name = "gradient", .type = ParamType::OptionalTensor, .default_value = Default::none()},
        {.name = "retain_graph", .type = ParamType::OptionalBool, .default_value = Default::none()},
    };
    static const ArgParser parser(
        "backward", true,
        {Signature{"backward(Tensor self, Tensor? gradient=None, bool? retain_graph=None)",
                   params}});
    ParsedArgs parsed;
    if (parser.parse(self, args, nargs, kwnames, parsed) < 0) return nullptr;
    const Tensor gradient = parsed.optional_tensor(1).value_or(Tensor());
    const bool retain_graph = parsed.optional_bool(2).value_or(kRetainGraphByDefault);
    const Tensor& tensor = unwrap_tensor(self);
    without_gil([&] { tensor.backward(gradient, retain_graph); });
    Py_RETURN_NONE;
  });
}

PyObject* tensor_detach(PyObject* self, PyObject*) {
  return guarded([&] { return wrap_tensor(unwrap_tensor(self).detach()); });
}

// --- module functions
// -----------------------------------------------------------------------------

PyObject* py_is_grad_enabled(PyObject*, PyObject*) { return PyBool_FromLong(is_grad_enabled()); }

PyObject* py_set_grad_enabled(PyObject*, PyObject* const* args, Py_ssize_t nargs,
                              PyObject* kwnames) {
  return guarded([&]() -> PyObject* {
    static constexpr Param params[] = {{.name = "mode", .type = ParamType::Bool}};
    static const ArgParser parser("_set_grad_enabled", false,
                                  {Signature{"_set_grad_enabled(bool mode)", params}});
    ParsedArgs parsed;
    if (parser.parse(nullptr, args, nargs, kwnames, parsed) < 0) return nullptr;
    set_grad_enabled(parsed.to_bool(0));
    Py_RETURN_NONE;
  });
}

PyObject* py_grad(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  return guarded([&]() -> PyObject* {
    static constexpr Param params[] = {
        {.name = "outputs", .type = ParamType::Tensors},
        {.name = "inputs", .type = ParamType::Tensors},
        {.name = "grad_outputs",
         .type = ParamType::OptionalTensors,
         .default_value = Default::none()},
        {.name = "retain_graph", .type = ParamType::OptionalBool, .default_value = Default::none()},
        {.name = "allow_unused", .type = ParamType::Bool, .default_value = Default::boolean(false)},
    };
    static const ArgParser parser(
        "grad", false,
        {Signature{"grad(Tensor[] outputs, Tensor[] inputs, Tensor?[]? grad_outputs=None, "
                   "bool? retain_graph=None, bool allow_unused=False) -> Tensor?[]",
                   params}});
    ParsedArgs parsed;
    if (parser.parse(nullptr, args, nargs, kwnames, parsed) < 0) return nullptr;
    const std::vector<Tensor> outputs = parsed.tensors(0);
    const std::vector<Tensor> inputs = parsed.tensors(1);
    const std::vector<Tensor> grad_outputs = parsed.tensors(2);
    const bool retain_graph = parsed.optional_bool(3).value_or(kRetainGraphByDefault);
    const bool allow_unused = parsed.to_bool(4);
    const std::vector<Tensor> grads = without_gil(
        [&] { return autograd::grad(outputs, inputs, grad_outputs, retain_graph, allow_unused); });
    PyObject* result = PyTuple_New(static_cast<Py_ssize_t>(grads.size()));
    if (result == nullptr) return nullptr;
    for (size_t i = 0; i < grads.size(); ++i) {
      PyObject* grad = wrap_tensor(grads[i]);
      if (grad == nullptr) {
        Py_DECREF(result);
        return nullptr;
      }
      PyTuple_SET_ITEM(result, static_cast<Py_ssize_t>(i), grad);
    }
    return result;
  });
}

PyObject* py_backward(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  return guarded([&]() -> PyObject* {
    static constexpr Param params[] = {
        {.name = "tensors", .type = ParamType::Tensors},
        {.name = "grad_tensors",
         .type = ParamType::OptionalTensors,
         .default_value = Default::none()},
        {.name = "retain_graph", .type = ParamType::OptionalBool, .default_value = Default::none()},
    };
    static const ArgParser parser(
        "backward", false,
        {Signature{"backward(Tensor[] tensors, Tensor?[]? grad_tensors=None, "
                   "bool? retain_graph=None)",
                   params}});
    ParsedArgs parsed;
    if (parser.parse(nullptr, args, nargs, kwnames, parsed) < 0) return nullptr;
    const std::vector<Tensor> tensors = parsed.tensors(0);
    const std::vector<Tensor> grad_tensors = parsed.tensors(1);
    const bool retain_graph = parsed.optional_bool(2).value_or(kRetainGraphByDefault);
    without_gil([&] { autograd::backward(tensors, grad_tensors, retain_graph); });
    Py_RETURN_NONE;
  });
}

}  // namespace

PyMethodDef tensor_autograd_methods[] = {
    {"requires_grad_", as_method(tensor_requires_grad_), kFastcall,
     "requires_grad_(requires_grad=True) -> Tensor\n\n"
     "Sets whether autograd records ops on this leaf tensor (floating-point tensors only);\n"
     "returns self."},
    {"backward", as_method(tensor_backward), kFastcall,
     "backward(gradient=None, retain_graph=None)\n\n"
     "Adds the gradients of this tensor to the grad of every leaf it depends on. gradient\n"
     "may be omitted for a one-element tensor. Without retain_graph the graph's saved\n"
     "tensors are freed."},
    {"detach", as_method(tensor_detach), METH_NOARGS,
     "detach() -> Tensor\n\nThe same data without history: a new leaf that does not require "
     "grad."},
    {nullptr, nullptr, 0, nullptr},
};

PyGetSetDef tensor_autograd_properties[] = {
    {"requires_grad", get_requires_grad, set_requires_grad,
     "Whether autograd records the ops on this tensor (settable on leaves).", nullptr},
    {"grad", get_grad, set_grad, "The gradient backward() accumulated into this leaf, or None.",
     nullptr},
    {"is_leaf", get_is_leaf, nullptr,
     "Whether the tensor was made by the user rather than recorded by an op.", nullptr},
    {"grad_fn", get_grad_fn, nullptr,
     "The node of the op that made this tensor, or None for a leaf.", nullptr},
    {"_version", get_version, nullptr,
     "How many writes through Backplane reached this tensor's storage.", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};

PyMethodDef autograd_functions[] = {
    {"is_grad_enabled", as_method(py_is_grad_enabled), METH_NOARGS,
     "is_grad_enabled() -> bool\n\nWhether ops on this thread record the autograd graph."},
    {"_set_grad_enabled", as_method(py_set_grad_enabled), kFastcall,
     "_set_grad_enabled(mode)\n\nTurns graph recording on or off on this thread."},
    {"grad", as_method(py_grad), kFastcall,
     "grad(outputs, inputs, grad_outputs=None, retain_graph=None, allow_unused=False) -> "
     "tuple\n\n"
     "The gradients of outputs with respect to inputs, returned rather than accumulated;\n"
     "None for an input the outputs do not depend on when allow_unused."},
    {"backward", as_method(py_backward), kFastcall,
     "backward(tensors, grad_tensors=None, retain_graph=None)\n\n"
     "Adds the gradients of tensors to the grad of every leaf they depend on."},
    {nullptr, nullptr, 0, nullptr},
};

}  // namespace bp::python
