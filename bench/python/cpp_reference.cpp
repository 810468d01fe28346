// The C++ side of bench_python: the same op, on tensors of the same size, timed from C++ in
// the process that times it from Python, so that the two differ only by the binding.
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <backplane/backplane.h>

#include <chrono>
#include <exception>

namespace {

// add_seconds(numel, iterations, device) -> seconds that `iterations` calls of bp::add took on
// float32 tensors of `numel` elements, results synchronised at the end as the Python side does.
PyObject* add_seconds(PyObject*, PyObject* args) {
  long long numel = 0;
  long long iterations = 0;
  const char* device = nullptr;
  if (!PyArg_ParseTuple(args, "LLs", &numel, &iterations, &device)) return nullptr;
  try {
    const bp::Tensor x = bp::randn({numel}, bp::kFloat32, bp::Device(device));
    const bp::Tensor y = bp::randn({numel}, bp::kFloat32, bp::Device(device));
    bp::synchronize(x.device());
    const auto start = std::chrono::steady_clock::now();
    for (long long i = 0; i < iterations; ++i) bp::add(x, y);
    bp::synchronize(x.device());
    const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
    return PyFloat_FromDouble(elapsed.count());
  } catch (const std::exception& error) {
    PyErr_SetString(PyExc_RuntimeError, error.what());
    return nullptr;
  }
}

PyMethodDef functions[] = {
    {"add_seconds", add_seconds, METH_VARARGS,
     "add_seconds(numel, iterations, device) -> seconds of `iterations` bp::add calls"},
    {nullptr, nullptr, 0, nullptr},
};

PyModuleDef module = {PyModuleDef_HEAD_INIT, "cpp_reference", nullptr, -1, functions};

}  // namespace

PyMODINIT_FUNC PyInit_cpp_reference() { return PyModule_Create(&module); }
