#include "errors.h"

#include <backplane/backplane.h>

#include <new>
#include <stdexcept>

namespace bp::python {

PyObject* error_type = nullptr;

bool add_error_type(PyObject* module) {
  error_type = PyErr_NewExceptionWithDoc(
      "backplane.Error",
      "A failure that Backplane's core or one of its backends reported: bad arguments to an op, "
      "a device out of memory, an op no loaded backend provides, a failing kernel.",
      PyExc_RuntimeError, nullptr);
  // The module takes a reference of its own; error_type keeps the one made here.
  return error_type != nullptr && PyModule_AddObjectRef(module, "Error", error_type) == 0;
}

void set_python_error_from_current_exception() {
  try {
    throw;
  } catch (const bp::Error& e) {
    PyErr_SetString(error_type, e.what());
  } catch (const std::bad_alloc&) {
    PyErr_NoMemory();
  } catch (const std::invalid_argument& e) {
    PyErr_SetString(PyExc_ValueError, e.what());
  } catch (const std::exception& e) {
    PyErr_SetString(error_type, e.what());
  } catch (...) {
    PyErr_SetString(error_type, "an unknown C++ exception reached Python");
  }
}

}  // namespace bp::python
