// The parts of bp.Tensor and of the module written in their own files; python_tensor.cpp and
// module.cpp gather them. Each method table ends with a zeroed sentinel.
#pragma once

#define PY_SSIZE_T_CLEAN
#include <Python.h>

namespace bp::python {

// Tensor's operators (tensor_numbers.cpp): arithmetic with PyTorch's promotion, in-place forms,
// unary minus and abs, bool/int/float/index conversion of one-element tensors.
extern PyNumberMethods tensor_number_methods;
PyObject* tensor_richcompare(PyObject* self, PyObject* other, int op);

// x[...] and x[...] = v (tensor_indexing.cpp).
extern PyMappingMethods tensor_mapping_methods;

// to, cpu, numpy, tolist, item, __dlpack__, __dlpack_device__ (tensor_conversion.cpp,
// dlpack_exchange.cpp).
extern PyMethodDef tensor_conversion_methods[];
extern PyMethodDef tensor_dlpack_methods[];

// requires_grad_, backward, detach and the autograd properties (autograd_functions.cpp).
extern PyMethodDef tensor_autograd_methods[];
extern PyGetSetDef tensor_autograd_properties[];

// Module functions: bp.tensor and the factories (tensor_factories.cpp); devices, default_device,
// synchronize, runtime_info, load_plugin, manual_seed (runtime_functions.cpp); grad mode and
// autograd.grad/backward (autograd_functions.cpp); from_dlpack (dlpack_exchange.cpp).
extern PyMethodDef factory_functions[];
extern PyMethodDef runtime_functions[];
extern PyMethodDef autograd_functions[];
extern PyMethodDef dlpack_functions[];

// bp.Event (runtime_functions.cpp); adds the type to the module.
bool add_event_type(PyObject* module);

// The handles of bp.optim's optimizers, and the functions that make them (optimizers.cpp).
extern PyMethodDef optimizer_functions[];
bool add_optimizer_type(PyObject* module);

}  // namespace bp::python
