// x[index] and x[index] = value, with Python's and PyTorch's meaning of ints, slices, None,
// Ellipsis and tuples of them. Basic indexing gives views (select, slice, unsqueeze), so that
// writes through them reach the tensor; a 1-D integer tensor (or a list of ints) picks rows
// along its dim with index_select, which copies.
#include "tensor_parts.h"

#include "dtype_object.h"
#include "errors.h"
#include "gil.h"
#include "parts_support.h"
#include "python_tensor.h"

#include <backplane/backplane.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace bp::python {
namespace {

// One view op of an index, worked out with the GIL held, run without it.
struct Step {
  enum class Kind { Select, Slice, Unsqueeze, IndexSelect };

  Step(Kind kind, int64_t dim, int64_t start = 0, int64_t stop = 0, int64_t step = 1,
       Tensor index = Tensor())
      : kind(kind), dim(dim), start(start), stop(stop), step(step), index(std::move(index)) {}

  Kind kind;
  int64_t dim;
  int64_t start;  // Select: the index
  int64_t stop;
  int64_t step;
  Tensor index;  // IndexSelect
};

struct IndexPlan {
  std::vector<Step> steps;
  bool copies = false;  // an IndexSelect step: the result is not a view
};

[[noreturn]] void throw_index_error(PyObject* type, const char* format, long long a,
                                    long long b = 0, long long c = 0) {
  PyErr_Format(type, format, a, b, c);
  throw PythonErrorSet();
}

[[noreturn]] void throw_bad_index(PyObject* item) {
  PyErr_Format(PyExc_IndexError,
               "only integers, slices (`:`), ellipsis (`...`), None and 1-D integer tensors "
               "(or lists of ints) are valid indices (got %s)",
               Py_TYPE(item)->tp_name);
  throw PythonErrorSet();
}

[[noreturn]] void throw_mask_index() {
  throw_python_error(PyExc_TypeError,
                     "indexing with bools (a bool, or a bool or uint8 tensor as a mask) is "
                     "not supported: Backplane has no masked_select op; pick the rows with an "
                     "int64 index tensor instead");
}

// Raises PyTorch's IndexError for the first index of a host index tensor outside
// [-size, size); a device's index tensor is left to index_select to check.
void check_index_bounds(const Tensor& index, int64_t size, int64_t source_dim) {
  if (!index.device().is_cpu()) return;
  const Tensor values = without_gil([&] { return index.to(kInt64).contiguous(); });
  const int64_t* data = values.numel() > 0 ? values.data_ptr<int64_t>() : nullptr;
  for (int64_t i = 0; i < values.numel(); ++i) {
    if (data[i] < -size || data[i] >= size) {
      throw_index_error(PyExc_IndexError,
                        "index %lld is out of bounds for dimension %lld with size %lld", data[i],
                        source_dim, size);
    }
  }
}

// The integer index tensor of a list of ints or of a tensor index, checked.
Tensor index_tensor(PyObject* item) {
  Tensor index;
  if (is_tensor(item)) {
    index = unwrap_tensor(item);
  } else {
    index = tensor_from_data(item, std::nullopt, std::nullopt);
    // An empty list reads as float32; as an index it selects nothing.
    if (index.numel() == 0) index = without_gil([&] { return index.to(kInt64); });
  }
  // PyTorch reads uint8 index tensors as masks too.
  if (index.dtype() == kBool || index.dtype() == kUInt8) throw_mask_index();
  if (index.dtype() != kInt64 && index.dtype() != kInt32) {
    PyErr_Format(PyExc_IndexError, "tensors used as indices must be int64 or int32 tensors, not %s",
                 python_dtype_name(index.dtype()));
    throw PythonErrorSet();
  }
  if (index.dim() != 1) {
    PyErr_Format(PyExc_IndexError,
                 "only 1-D integer index tensors are supported (Backplane indexes with "
                 "index_select), and this one has %lld dims",
                 static_cast<long long>(index.dim()));
    throw PythonErrorSet();
  }
  return index;
}

bool is_int_index(PyObject* item) {
  return !PyBool_Check(item) && !is_tensor(item) && PyIndex_Check(item);
}

// The int an item selects with: a Python int (or __index__ object, not bool), or a 0-dim
// integer tensor, which indexes as the int it holds; nullopt for any other item.
std::optional<int64_t> int_index_value(PyObject* item) {
  if (is_int_index(item)) {
    const Py_ssize_t value = PyNumber_AsSsize_t(item, PyExc_IndexError);
    if (value == -1 && PyErr_Occurred()) throw PythonErrorSet();
    return value;
  }
  if (!is_tensor(item) || unwrap_tensor(item).dim() != 0 ||
      !is_integral(unwrap_tensor(item).dtype(), /*include_bool=*/false)) {
    return std::nullopt;
  }
  PyObject* value = one_element_value(unwrap_tensor(item), "index", PyExc_IndexError);
  if (value == nullptr) throw PythonErrorSet();
  const long long number = PyLong_AsLongLong(value);
  Py_DECREF(value);
  return number;
}

// Whether the item takes one of the tensor's dims (None and Ellipsis do not).
bool takes_a_dim(PyObject* item) { return item != Py_None && item != Py_Ellipsis; }

// Works out the view ops of `index` on a tensor of shape `sizes`, checking every item.
IndexPlan plan_index(IntArrayRef sizes, PyObject* index) {
  PyObject* const* items = &index;
  Py_ssize_t count = 1;
  if (PyTuple_Check(index)) {
    items = &PyTuple_GET_ITEM(index, 0);
    count = PyTuple_GET_SIZE(index);
  }
  const auto rank = static_cast<int64_t>(sizes.size());
  int64_t taken = 0;
  bool ellipsis = false;
  for (Py_ssize_t i = 0; i < count; ++i) {
    if (items[i] == Py_Ellipsis) {
      if (ellipsis) {
        throw_python_error(PyExc_IndexError, "an index can only have a single ellipsis ('...')");
      }
      ellipsis = true;
    }
    if (takes_a_dim(items[i])) ++taken;
  }
  if (taken > rank) {
    throw_index_error(PyExc_IndexError, "too many indices for tensor of dimension %lld", rank);
  }

  IndexPlan plan;
  plan.steps.reserve(static_cast<size_t>(count));
  DimVector shape(sizes);  // the shape after the steps so far
  int64_t dim = 0;         // of that shape
  int64_t source_dim = 0;  // of the indexed tensor, for messages
  for (Py_ssize_t i = 0; i < count; ++i) {
    PyObject* item = items[i];
    if (item == Py_None) {
      plan.steps.emplace_back(Step::Kind::Unsqueeze, dim);
      shape.insert(static_cast<size_t>(dim), 1);
      ++dim;
    } else if (item == Py_Ellipsis) {
      dim += rank - taken;
      source_dim += rank - taken;
    } else if (PySlice_Check(item)) {
      Py_ssize_t start = 0;
      Py_ssize_t stop = 0;
      Py_ssize_t step = 0;
      if (PySlice_Unpack(item, &start, &stop, &step) != 0) throw PythonErrorSet();
      if (step <= 0) throw_python_error(PyExc_ValueError, "step must be greater than zero");
      const int64_t size = shape[static_cast<size_t>(dim)];
      const Py_ssize_t length = PySlice_AdjustIndices(size, &start, &stop, step);
      if (!(start == 0 && length == size && (step == 1 || size <= 1))) {
        plan.steps.emplace_back(Step::Kind::Slice, dim, start, stop, step);
        shape[static_cast<size_t>(dim)] = length;
      }
      ++dim;
    } else if (const std::optional<int64_t> number = int_index_value(item)) {
      const int64_t size = shape[static_cast<size_t>(dim)];
      if (*number < -size || *number >= size) {
        throw_index_error(PyExc_IndexError,
                          "index %lld is out of bounds for dimension %lld with size %lld", *number,
                          source_dim, size);
      }
      plan.steps.emplace_back(Step::Kind::Select, dim, *number < 0 ? *number + size : *number);
      shape.erase(static_cast<size_t>(dim));
    } else if (is_tensor(item) || PyList_Check(item)) {
      if (plan.copies) {
        throw_python_error(PyExc_IndexError,
                           "only one index tensor (or list) per index is supported: Backplane "
                           "indexes with index_select, one dim at a time");
      }
      Tensor index = index_tensor(item);
      check_index_bounds(index, shape[static_cast<size_t>(dim)], source_dim);
      shape[static_cast<size_t>(dim)] = index.numel();
      plan.steps.emplace_back(Step::Kind::IndexSelect, dim, 0, 0, 1, std::move(index));
      plan.copies = true;
      ++dim;
    } else if (PyBool_Check(item)) {
      throw_mask_index();
    } else {
      throw_bad_index(item);
    }
    if (takes_a_dim(item)) ++source_dim;
  }
  return plan;
}

// The tensor `plan` makes of `self`; call without the GIL.
Tensor apply_plan(const Tensor& self, const IndexPlan& plan) {
  // x[...] and x[:] are new views of all of x, as in PyTorch.
  if (plan.steps.empty()) return self.view(self.sizes());
  Tensor result = self;
  for (const Step& step : plan.steps) {
    switch (step.kind) {
      case Step::Kind::Select: result = select(result, step.dim, step.start); break;
      case Step::Kind::Slice:
        result = slice(result, step.dim, step.start, step.stop, step.step);
        break;
      case Step::Kind::Unsqueeze: result = unsqueeze(result, step.dim); break;
      case Step::Kind::IndexSelect: {
        // Negative indices count from the end, as PyTorch's advanced indexing has them;
        // index_select takes only the others.
        const Tensor index = step.index.to(result.device());
        const Tensor wrapped = where(lt(index, 0), add(index, result.size(step.dim)), index);
        result = index_select(result, step.dim, wrapped);
        break;
      }
    }
  }
  return result;
}

PyObject* tensor_subscript(PyObject* self, PyObject* index) {
  return guarded([&] {
    const Tensor& tensor = unwrap_tensor(self);
    const IndexPlan plan = plan_index(tensor.sizes(), index);
    return wrap_tensor(without_gil([&] { return apply_plan(tensor, plan); }));
  });
}

int tensor_ass_subscript(PyObject* self, PyObject* index, PyObject* value) {
  PyObject* done = guarded([&]() -> PyObject* {
    if (value == nullptr) {
      throw_python_error(PyExc_TypeError, "tensors do not support deleting items");
    }
    const Tensor& tensor = unwrap_tensor(self);
    const IndexPlan plan = plan_index(tensor.sizes(), index);
    if (plan.copies) {
      throw_python_error(PyExc_TypeError,
                         "assigning through an index tensor (or list) is not supported: "
                         "Backplane has no index_put_ op; assign through ints and slices");
    }
    if (std::optional<Scalar> number = python_scalar(value)) {
      without_gil([&] { apply_plan(tensor, plan).fill_(*number); });
      Py_RETURN_NONE;
    }
    const Tensor source = is_tensor(value)
                              ? unwrap_tensor(value)
                              : tensor_from_data(value, tensor.dtype(), tensor.device());
    without_gil([&] { apply_plan(tensor, plan).copy_(source); });
    Py_RETURN_NONE;
  });
  if (done == nullptr) return -1;
  Py_DECREF(done);
  return 0;
}

Py_ssize_t tensor_length(PyObject* self) {
  const Tensor& tensor = unwrap_tensor(self);
  if (tensor.dim() == 0) {
    PyErr_SetString(PyExc_TypeError, "len() of a 0-d tensor");
    return -1;
  }
  return tensor.sizes()[0];
}

}  // namespace

PyMappingMethods tensor_mapping_methods = {
    tensor_length,
    tensor_subscript,
    tensor_ass_subscript,
};

}  // namespace bp::python
