// Kernels run without the GIL, so that other Python threads run while a long op computes.
#pragma once

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <utility>

namespace bp::python {

// Calls `work` with the GIL released, and takes the GIL back however `work` ends. `work` must
// not touch Python objects.
template <typename Work>
decltype(auto) without_gil(Work&& work) {
  struct Released {
    PyThreadState* state = PyEval_SaveThread();
    ~Released() { PyEval_RestoreThread(state); }
  } released;
  return std::forward<Work>(work)();
}

}  // namespace bp::python
