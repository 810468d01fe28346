// Results of the generated bindings back to Python. Every function returns a new reference, or
// null with a Python exception set.
#pragma once

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <backplane/backplane.h>

#include <initializer_list>
#include <tuple>
#include <utility>

#include "python_tensor.h"

namespace bp::python {

// A result type for ops with named returns, like PyTorch's (values, indices) of max.dim: a
// tuple whose items are also attributes. Made once per op (call from a function-local static).
PyTypeObject* named_return_type(const char* type_name, std::initializer_list<const char*> fields);

inline PyObject* wrap(const Tensor& tensor) { return wrap_tensor(tensor); }

// A tuple of Tensors; `named_type` (from named_return_type) or null for a plain tuple.
template <typename... Tensors>
PyObject* wrap(const std::tuple<Tensors...>& results, PyTypeObject* named_type = nullptr) {
  return std::apply(
      [&](const auto&... tensor) { return wrap_tensor_tuple({Tensor(tensor)...}, named_type); },
      results);
}

}  // namespace bp::python
