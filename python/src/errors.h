// C++ exceptions to Python exceptions, at the edge of every binding.
#pragma once

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <exception>
#include <utility>

namespace bp::python {

// Thrown by code that has already set a Python exception (a failed conversion), so that
// guarded() returns null without replacing it.
struct PythonErrorSet : std::exception {};

// bp.Error, a RuntimeError subclass carrying the core's message.
extern PyObject* error_type;
bool add_error_type(PyObject* module);

// Sets the Python exception for the C++ exception in flight: bp::Error -> bp.Error,
// std::bad_alloc -> MemoryError, std::invalid_argument -> ValueError, anything else ->
// bp.Error with its what().
void set_python_error_from_current_exception();

// Runs `body` (which returns a new reference or null) and turns any C++ exception into a
// Python one. Every binding's body runs inside one.
template <typename Body>
PyObject* guarded(Body&& body) noexcept {
  try {
    return std::forward<Body>(body)();
  } catch (const PythonErrorSet&) {
    return nullptr;
  } catch (...) {
    set_python_error_from_current_exception();
    return nullptr;
  }
}

}  // namespace bp::python
