#include "conversions.h"

#include <vector>

namespace bp::python {

PyTypeObject* named_return_type(const char* type_name, std::initializer_list<const char*> fields) {
  // The descriptions stay in use by the type, which lives as long as the process.
  auto* descriptions = new PyStructSequence_Field[fields.size() + 1];
  size_t k = 0;
  for (const char* field : fields) descriptions[k++] = {field, nullptr};
  descriptions[k] = {nullptr, nullptr};
  auto* description =
      new PyStructSequence_Desc{type_name, nullptr, descriptions, static_cast<int>(fields.size())};
  return PyStructSequence_NewType(description);
}

PyObject* wrap_tensor_tuple(std::initializer_list<Tensor> tensors, PyTypeObject* named_type) {
  const auto n = static_cast<Py_ssize_t>(tensors.size());
  PyObject* result = named_type != nullptr ? PyStructSequence_New(named_type) : PyTuple_New(n);
  if (result == nullptr) return nullptr;
  Py_ssize_t k = 0;
  for (const Tensor& tensor : tensors) {
    PyObject* item = wrap_tensor(tensor);
    if (item == nullptr) {
      Py_DECREF(result);
      return nullptr;
    }
    if (named_type != nullptr) {
      PyStructSequence_SetItem(result, k++, item);
    } else {
      PyTuple_SET_ITEM(result, k++, item);
    }
  }
  return result;
}

}  // namespace bp::python
