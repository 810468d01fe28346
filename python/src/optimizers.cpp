// The handles behind bp.optim.SGD and bp.optim.AdamW (python/backplane/optim.py): each owns one
// of the C++ optimizers of <backplane/optim.h>, so that Python steps exactly as C++ does.
#include "tensor_parts.h"

#include "arg_parser.h"
#include "errors.h"
#include "gil.h"
#include "parts_support.h"

#include <backplane/optim.h>

#include <memory>

namespace bp::python {
namespace {

struct PythonOptimizer {
  PyObject_HEAD
  optim::Optimizer* optimizer;
  double* lr;  // the optimizer's own options().lr
};

PyTypeObject* optimizer_type = nullptr;

PyObject* wrap_optimizer(std::unique_ptr<optim::Optimizer> optimizer, double* lr) {
  PyObject* self = optimizer_type->tp_alloc(optimizer_type, 0);
  if (self == nullptr) return nullptr;
  auto* handle = reinterpret_cast<PythonOptimizer*>(self);
  handle->optimizer = optimizer.release();
  handle->lr = lr;
  return self;
}

PyObject* py_sgd(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  return guarded([&]() -> PyObject* {
    static constexpr Param params[] = {
        {.name = "params", .type = ParamType::TensorList},
        {.name = "lr", .type = ParamType::Float},
        {.name = "momentum", .type = ParamType::Float},
        {.name = "dampening", .type = ParamType::Float},
        {.name = "weight_decay", .type = ParamType::Float},
        {.name = "nesterov", .type = ParamType::Bool},
    };
    static const ArgParser parser(
        "_sgd", false,
        {Signature{"_sgd(Tensor[] params, float lr, float momentum, float dampening, "
                   "float weight_decay, bool nesterov)",
                   params}});
    ParsedArgs parsed;
    if (parser.parse(nullptr, args, nargs, kwnames, parsed) < 0) return nullptr;
    std::vector<Tensor> parameters = parsed.tensor_list(0);
    const optim::SGDOptions options{.lr = parsed.to_double(1),
                                    .momentum = parsed.to_double(2),
                                    .dampening = parsed.to_double(3),
                                    .weight_decay = parsed.to_double(4),
                                    .nesterov = parsed.to_bool(5)};
    auto sgd = std::make_unique<optim::SGD>(std::move(parameters), options);
    double* lr = &sgd->options().lr;
    return wrap_optimizer(std::move(sgd), lr);
  });
}

PyObject* py_adamw(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  return guarded([&]() -> PyObject* {
    static constexpr Param params[] = {
        {.name = "params", .type = ParamType::TensorList},
        {.name = "lr", .type = ParamType::Float},
        {.name = "beta1", .type = ParamType::Float},
        {.name = "beta2", .type = ParamType::Float},
        {.name = "eps", .type = ParamType::Float},
        {.name = "weight_decay", .type = ParamType::Float},
    };
    static const ArgParser parser(
        "_adamw", false,
        {Signature{"_adamw(Tensor[] params, float lr, float beta1, float beta2, float eps, "
                   "float weight_decay)",
                   params}});
    ParsedArgs parsed;
    if (parser.parse(nullptr, args, nargs, kwnames, parsed) < 0) return nullptr;
    std::vector<Tensor> parameters = parsed.tensor_list(0);
    const optim::AdamWOptions options{
        .lr = parsed.to_double(1),
        .betas = {.beta1 = parsed.to_double(2), .beta2 = parsed.to_double(3)},
        .eps = parsed.to_double(4),
        .weight_decay = parsed.to_double(5)};
    auto adamw = std::make_unique<optim::AdamW>(std::move(parameters), options);
    double* lr = &adamw->options().lr;
    return wrap_optimizer(std::move(adamw), lr);
  });
}

PythonOptimizer& unwrap_optimizer(PyObject* self) {
  return *reinterpret_cast<PythonOptimizer*>(self);
}

void optimizer_dealloc(PyObject* self) {
  PyTypeObject* type = Py_TYPE(self);
  delete unwrap_optimizer(self).optimizer;
  type->tp_free(self);
  Py_DECREF(type);
}

PyObject* optimizer_step(PyObject* self, PyObject*) {
  return guarded([&]() -> PyObject* {
    optim::Optimizer& optimizer = *unwrap_optimizer(self).optimizer;
    without_gil([&] { optimizer.step(); });
    Py_RETURN_NONE;
  });
}

PyObject* optimizer_zero_grad(PyObject* self, PyObject* set_to_none) {
  return guarded([&]() -> PyObject* {
    if (!PyBool_Check(set_to_none)) {
      throw_argument_type_error("zero_grad", "set_to_none", "bool", set_to_none);
    }
    optim::Optimizer& optimizer = *unwrap_optimizer(self).optimizer;
    without_gil([&] { optimizer.zero_grad(set_to_none == Py_True); });
    Py_RETURN_NONE;
  });
}

PyObject* optimizer_lr(PyObject* self, void*) {
  return PyFloat_FromDouble(*unwrap_optimizer(self).lr);
}

int optimizer_set_lr(PyObject* self, PyObject* value, void*) {
  if (value == nullptr || !(PyFloat_Check(value) || PyLong_Check(value))) {
    PyErr_SetString(PyExc_TypeError, "lr must be a float");
    return -1;
  }
  const double lr = PyFloat_AsDouble(value);
  if (lr == -1.0 && PyErr_Occurred()) return -1;
  if (!(lr >= 0)) {
    PyErr_Format(PyExc_ValueError, "lr must be at least 0, got %R", value);
    return -1;
  }
  *unwrap_optimizer(self).lr = lr;
  return 0;
}

PyMethodDef optimizer_methods[] = {
    {"step", as_method(optimizer_step), METH_NOARGS,
     "step()\n\nUpdates every parameter that has a gradient, without recording for autograd."},
    {"zero_grad", as_method(optimizer_zero_grad), METH_O,
     "zero_grad(set_to_none)\n\nClears every parameter's gradient: to None, or to zeros."},
    {nullptr, nullptr, 0, nullptr},
};

PyGetSetDef optimizer_properties[] = {
    {"lr", optimizer_lr, optimizer_set_lr, "The learning rate the next step uses.", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};

PyType_Slot optimizer_slots[] = {
    {Py_tp_dealloc, reinterpret_cast<void*>(optimizer_dealloc)},
    {Py_tp_methods, optimizer_methods},
    {Py_tp_getset, optimizer_properties},
    {Py_tp_doc, const_cast<char*>("An optimizer of <backplane/optim.h>, made by _sgd or _adamw "
                                  "for bp.optim.SGD and bp.optim.AdamW.")},
    {0, nullptr},
};

PyType_Spec optimizer_spec = {
    "backplane._C._Optimizer",
    sizeof(PythonOptimizer),
    0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION,
    optimizer_slots,
};

}  // namespace

bool add_optimizer_type(PyObject* module) {
  PyObject* type = PyType_FromSpec(&optimizer_spec);
  if (type == nullptr) return false;
  optimizer_type = reinterpret_cast<PyTypeObject*>(type);
  const int added = PyModule_AddObjectRef(module, "_Optimizer", type);
  Py_DECREF(type);
  return added == 0;
}

PyMethodDef optimizer_functions[] = {
    {"_sgd", as_method(py_sgd), kFastcall,
     "_sgd(params, lr, momentum, dampening, weight_decay, nesterov) -> _Optimizer\n\n"
     "The handle bp.optim.SGD steps through."},
    {"_adamw", as_method(py_adamw), kFastcall,
     "_adamw(params, lr, beta1, beta2, eps, weight_decay) -> _Optimizer\n\n"
     "The handle bp.optim.AdamW steps through."},
    {nullptr, nullptr, 0, nullptr},
};

}  // namespace bp::python
