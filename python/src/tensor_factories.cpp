// bp.tensor and the factories (empty, zeros, ones, full, rand, randn and their _like forms),
// and the error and number helpers of parts_support.h that every hand-written part uses.
#include "tensor_parts.h"

#include "arg_parser.h"
#include "dtype_object.h"
#include "errors.h"
#include "gil.h"
#include "parts_support.h"
#include "python_tensor.h"

#include <backplane/backplane.h>

#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

namespace bp::python {

// --- parts_support.h: errors and numbers ------------------------------------------------------

void throw_python_error(PyObject* type, const char* message) {
  PyErr_SetString(type, message);
  throw PythonErrorSet();
}

void throw_argument_type_error(const char* function, const char* name, const char* expected,
                               PyObject* got) {
  PyErr_Format(PyExc_TypeError, "%s(): argument '%s' must be %s, not %s", function, name, expected,
               Py_TYPE(got)->tp_name);
  throw PythonErrorSet();
}

std::optional<Scalar> python_scalar(PyObject* object) {
  if (PyBool_Check(object)) return Scalar(object == Py_True);
  if (PyFloat_Check(object)) return Scalar(PyFloat_AS_DOUBLE(object));
  if (PyLong_Check(object)) {
    const std::optional<int64_t> value = python_int64(object);
    if (!value) {
      PyErr_Format(PyExc_OverflowError,
                   "the Python int %R does not fit in int64, the widest integer a tensor holds",
                   object);
      throw PythonErrorSet();
    }
    return Scalar(*value);
  }
  return std::nullopt;
}

namespace {

// --- bp.tensor from nested sequences ------------------------------------------------------------

// What a leaf of nested data is, in PyTorch's order of inference: any float makes the tensor
// floating, else any int makes it int64, else it is bool.
enum class Kind { Bool, Int, Float };

struct Leaf {
  Kind kind;
  int64_t integer = 0;
  double floating = 0;
};

bool is_nested_sequence(PyObject* object) {
  if (PyList_Check(object) || PyTuple_Check(object)) return true;
  if (is_tensor(object) || PyUnicode_Check(object) || PyBytes_Check(object) ||
      PyByteArray_Check(object) || PyDict_Check(object)) {
    return false;
  }
  return PySequence_Check(object) != 0;
}

std::string format_position(const DimVector& position) {
  std::string text = "[";
  for (size_t i = 0; i < position.size(); ++i) {
    if (i > 0) text += ", ";
    text += std::to_string(position[i]);
  }
  return text + "]";
}

// Reads nested sequences of numbers: the shape from the first element at each depth, then
// every element, checking that each sequence has the length its depth has.
class NestedData {
 public:
  explicit NestedData(PyObject* data) : data_(data) {
    PyObject* object = data;
    Py_INCREF(object);
    while (is_nested_sequence(object)) {
      const Py_ssize_t length = PySequence_Size(object);
      if (length < 0) {
        // An unsized sequence, such as a 0-dim NumPy array: a leaf.
        PyErr_Clear();
        break;
      }
      shape_.push_back(length);
      if (length == 0) break;
      PyObject* first = PySequence_GetItem(object, 0);
      Py_DECREF(object);
      if (first == nullptr) throw PythonErrorSet();
      object = first;
    }
    Py_DECREF(object);
  }

  const DimVector& shape() const { return shape_; }

  // The dtype the leaves infer, checking the structure on the way.
  DType infer_dtype() {
    Kind kind = Kind::Bool;
    bool any = false;
    visit(data_, 0, [&](PyObject* object) {
      const Kind leaf = leaf_kind(object);
      if (!any || leaf > kind) kind = leaf;
      any = true;
    });
    if (!any || kind == Kind::Float) return kFloat32;
    return kind == Kind::Int ? kInt64 : kBool;
  }

  // Writes every leaf into `out` (contiguous, of the shape) converted to `dtype`, which is not
  // Float16 or BFloat16.
  void write(const Tensor& out) {
    switch (out.dtype()) {
      case DType::Float32: write_as<float>(out); break;
      case DType::Float64: write_as<double>(out); break;
      case DType::Int8: write_as<int8_t>(out); break;
      case DType::UInt8: write_as<uint8_t>(out); break;
      case DType::Int32: write_as<int32_t>(out); break;
      case DType::Int64: write_as<int64_t>(out); break;
      case DType::Bool: write_as<bool>(out); break;
      case DType::Float16:
      case DType::BFloat16: throw Error(ErrorCode::Internal, "NestedData::write: half dtype");
    }
  }

 private:
  // Calls `leaf` on each leaf in row-major order.
  template <typename OnLeaf>
  void visit(PyObject* object, size_t depth, OnLeaf&& leaf) {
    if (depth == shape_.size()) {
      if (is_nested_sequence(object) && PySequence_Size(object) >= 0) {
        PyErr_Format(PyExc_ValueError,
                     "tensor(): the data is ragged: element %s is a sequence where the first "
                     "element at that depth is a number",
                     format_position(position_).c_str());
        throw PythonErrorSet();
      }
      PyErr_Clear();
      leaf(object);
      return;
    }
    if (!is_nested_sequence(object)) {
      PyErr_Format(PyExc_ValueError,
                   "tensor(): the data is ragged: expected a sequence of length %lld at dim %zu "
                   "(element %s), got %s",
                   static_cast<long long>(shape_[depth]), depth, format_position(position_).c_str(),
                   Py_TYPE(object)->tp_name);
      throw PythonErrorSet();
    }
    PyObject* fast = PySequence_Fast(object, "tensor(): data must be a sequence");
    if (fast == nullptr) throw PythonErrorSet();
    struct Release {
      PyObject* object;
      ~Release() { Py_DECREF(object); }
    } release{fast};
    const Py_ssize_t length = PySequence_Fast_GET_SIZE(fast);
    if (length != shape_[depth]) {
      PyErr_Format(PyExc_ValueError,
                   "tensor(): the data is ragged: expected a sequence of length %lld at dim %zu "
                   "(got %zd at element %s)",
                   static_cast<long long>(shape_[depth]), depth, length,
                   format_position(position_).c_str());
      throw PythonErrorSet();
    }
    PyObject** items = PySequence_Fast_ITEMS(fast);
    position_.push_back(0);
    for (Py_ssize_t i = 0; i < length; ++i) {
      position_[depth] = i;
      visit(items[i], depth + 1, leaf);
    }
    position_.erase(depth);
  }

  [[noreturn]] void throw_not_a_number(PyObject* object) const {
    PyErr_Format(PyExc_TypeError,
                 "tensor(): element %s is a %s; the data must hold numbers (bool, int, float) "
                 "or one-element tensors",
                 format_position(position_).c_str(), Py_TYPE(object)->tp_name);
    throw PythonErrorSet();
  }

  Kind leaf_kind(PyObject* object) const {
    if (PyBool_Check(object)) return Kind::Bool;
    if (PyFloat_Check(object)) return Kind::Float;
    if (PyLong_Check(object)) return Kind::Int;
    if (is_tensor(object)) {
      const DType dtype = unwrap_tensor(object).dtype();
      if (is_floating_point(dtype)) return Kind::Float;
      return dtype == kBool ? Kind::Bool : Kind::Int;
    }
    // NumPy's scalars: integers have __index__, floats __float__. Some objects have both
    // (a one-element torch.Tensor), and only __index__ says which they are, by failing.
    if (PyIndex_Check(object)) {
      PyObject* index = PyNumber_Index(object);
      if (index != nullptr) {
        Py_DECREF(index);
        return Kind::Int;
      }
      if (!PyErr_ExceptionMatches(PyExc_TypeError)) throw PythonErrorSet();
      PyErr_Clear();
    }
    if (Py_TYPE(object)->tp_as_number != nullptr &&
        Py_TYPE(object)->tp_as_number->nb_float != nullptr) {
      return Kind::Float;
    }
    throw_not_a_number(object);
  }

  Leaf read_leaf(PyObject* object) const {
    if (is_tensor(object)) {
      PyObject* value = one_element_value(unwrap_tensor(object), "tensor", PyExc_ValueError);
      if (value == nullptr) throw PythonErrorSet();
      struct Release {
        PyObject* object;
        ~Release() { Py_DECREF(object); }
      } release{value};
      return read_leaf(value);
    }
    switch (leaf_kind(object)) {
      case Kind::Bool: return {Kind::Bool, object == Py_True ? 1 : 0};
      case Kind::Int: {
        const std::optional<int64_t> value = python_int64(object);
        if (!value) {
          PyErr_Format(PyExc_OverflowError, "tensor(): element %s = %R does not fit in int64",
                       format_position(position_).c_str(), object);
          throw PythonErrorSet();
        }
        return {Kind::Int, *value};
      }
      case Kind::Float: {
        const double value = PyFloat_AsDouble(object);
        if (value == -1.0 && PyErr_Occurred()) throw PythonErrorSet();
        return {Kind::Float, 0, value};
      }
    }
    throw_not_a_number(object);
  }

  template <typename T>
  T convert(const Leaf& leaf, DType dtype) const {
    if constexpr (std::is_same_v<T, bool>) {
      return leaf.kind == Kind::Float ? leaf.floating != 0 : leaf.integer != 0;
    } else if constexpr (std::is_floating_point_v<T>) {
      if (leaf.kind != Kind::Float) return static_cast<T>(leaf.integer);
      if (std::isfinite(leaf.floating) &&
          std::fabs(leaf.floating) > static_cast<double>(std::numeric_limits<T>::max())) {
        throw_overflow(leaf, dtype);
      }
      return static_cast<T>(leaf.floating);
    } else {
      constexpr auto lowest = std::numeric_limits<T>::lowest();
      constexpr auto highest = std::numeric_limits<T>::max();
      if (leaf.kind == Kind::Float) {
        // 2^63 is the first double beyond int64; the narrower types' bounds are exact.
        const double value = std::trunc(leaf.floating);
        if (!(value >= static_cast<double>(lowest) && value < static_cast<double>(highest) + 1.0)) {
          throw_overflow(leaf, dtype);
        }
        return static_cast<T>(value);
      }
      if (leaf.integer < static_cast<int64_t>(lowest) ||
          static_cast<uint64_t>(std::max<int64_t>(leaf.integer, 0)) >
              static_cast<uint64_t>(highest)) {
        throw_overflow(leaf, dtype);
      }
      return static_cast<T>(leaf.integer);
    }
  }

  [[noreturn]] void throw_overflow(const Leaf& leaf, DType dtype) const {
    const std::string value =
        leaf.kind == Kind::Float ? std::to_string(leaf.floating) : std::to_string(leaf.integer);
    PyErr_Format(PyExc_OverflowError,
                 "tensor(): element %s = %s cannot be converted to %s without overflow",
                 format_position(position_).c_str(), value.c_str(), python_dtype_name(dtype));
    throw PythonErrorSet();
  }

  template <typename T>
  void write_as(const Tensor& out) {
    T* next = out.numel() > 0 ? out.data_ptr<T>() : nullptr;
    const DType dtype = out.dtype();
    visit(data_, 0, [&](PyObject* object) { *next++ = convert<T>(read_leaf(object), dtype); });
  }

  PyObject* data_;
  DimVector shape_;
  DimVector position_;  // of the element being read, for messages
};

// --- bp.tensor from buffers
// -----------------------------------------------------------------------

// The dtype of a buffer's struct format ("f", "<i8"...), or nullopt for one Backplane lacks.
std::optional<DType> buffer_dtype(const char* format, Py_ssize_t itemsize) {
  if (format == nullptr) format = "B";
  if (*format == '@' || *format == '=' || *format == '<') ++format;
  if (format[0] == '\0' || format[1] != '\0') return std::nullopt;
  switch (format[0]) {
    case '?': return kBool;
    case 'e': return kFloat16;
    case 'f': return kFloat32;
    case 'd': return kFloat64;
    case 'b':
    case 'h':
    case 'i':
    case 'l':
    case 'q':
    case 'n':
      if (itemsize == 1) return kInt8;
      if (itemsize == 4) return kInt32;
      if (itemsize == 8) return kInt64;
      return std::nullopt;
    case 'B':
    case 'H':
    case 'I':
    case 'L':
    case 'Q':
    case 'N':
      if (itemsize == 1) return kUInt8;
      return std::nullopt;
    default: return std::nullopt;
  }
}

// A host tensor with a copy of what `object`'s buffer holds, or an undefined tensor (with no
// Python error set) when it offers no buffer.
Tensor tensor_from_buffer(PyObject* object) {
  Py_buffer view;
  if (PyObject_GetBuffer(object, &view, PyBUF_RECORDS_RO) != 0) {
    PyErr_Clear();
    return Tensor();
  }
  struct Release {
    Py_buffer* view;
    ~Release() { PyBuffer_Release(view); }
  } release{&view};
  const std::optional<DType> dtype = buffer_dtype(view.format, view.itemsize);
  if (!dtype || static_cast<size_t>(view.itemsize) != element_size(*dtype)) {
    PyErr_Format(PyExc_TypeError,
                 "tensor(): cannot read a buffer of format '%s' (%zd-byte items) from %s; "
                 "tensors hold float32, float64, float16, bfloat16, int8, uint8, int32, int64 "
                 "or bool",
                 view.format != nullptr ? view.format : "B", view.itemsize,
                 Py_TYPE(object)->tp_name);
    throw PythonErrorSet();
  }
  DimVector sizes;
  for (int d = 0; d < view.ndim; ++d) sizes.push_back(view.shape[d]);
  Tensor result = empty(sizes, *dtype, Device::cpu());
  if (view.len > 0 && PyBuffer_ToContiguous(result.data_ptr(), &view, view.len, 'C') != 0) {
    throw PythonErrorSet();
  }
  return result;
}

bool has_dlpack(PyObject* object) {
  static PyObject* const name = PyUnicode_InternFromString("__dlpack__");
  return PyObject_HasAttr(object, name) != 0;
}

// Converts a fresh host tensor of data to what the caller asked for.
Tensor convert(Tensor tensor, std::optional<DType> dtype, std::optional<Device> device) {
  return without_gil([&] {
    if (dtype) tensor = tensor.to(*dtype);
    if (device) tensor = tensor.to(*device);
    return tensor;
  });
}

}  // namespace

Tensor tensor_from_data(PyObject* data, std::optional<DType> dtype, std::optional<Device> device) {
  if (is_tensor(data)) {
    const Tensor& source = unwrap_tensor(data);
    return without_gil([&] {
      Tensor result = source.detach();
      if (dtype) result = result.to(*dtype);
      if (device) result = result.to(*device);
      if (result.impl()->storage().get() == source.impl()->storage().get()) result = result.clone();
      return result;
    });
  }
  if (PyUnicode_Check(data)) {
    PyErr_SetString(PyExc_TypeError,
                    "tensor(): data must be a number, a sequence of numbers, an array or a "
                    "tensor, not str");
    throw PythonErrorSet();
  }
  // Before numbers: NumPy's float64 scalar is a Python float, but keeps its dtype.
  if (PyObject_CheckBuffer(data)) {
    Tensor host = tensor_from_buffer(data);
    if (host.defined()) return convert(std::move(host), dtype, device);
  }
  if (std::optional<Scalar> number = python_scalar(data)) {
    const DType dtype_of_number = dtype.value_or(number->default_dtype());
    return without_gil(
        [&] { return scalar_tensor(*number, dtype_of_number, device.value_or(Device::cpu())); });
  }
  // Arrays of other libraries (torch.Tensor) are sequences too, but DLPack reads them whole.
  if (!PyList_Check(data) && !PyTuple_Check(data) && has_dlpack(data)) {
    const Tensor shared = tensor_from_dlpack_object(data);
    return without_gil([&] {
      Tensor result = shared;
      if (dtype) result = result.to(*dtype);
      if (device) result = result.to(*device);
      if (result.impl()->storage().get() == shared.impl()->storage().get()) result = result.clone();
      return result;
    });
  }
  if (!is_nested_sequence(data)) {
    PyErr_Format(PyExc_TypeError,
                 "tensor(): data must be a number, a sequence of numbers, an array or a "
                 "tensor, not %s",
                 Py_TYPE(data)->tp_name);
    throw PythonErrorSet();
  }
  NestedData nested(data);
  const DType inferred = nested.infer_dtype();
  const DType target = dtype.value_or(inferred);
  // Half-width dtypes are written as float32 and converted by the core, which rounds as its
  // kernels do.
  const bool via_float = target == kFloat16 || target == kBFloat16;
  Tensor host = empty(nested.shape(), via_float ? kFloat32 : target, Device::cpu());
  nested.write(host);
  return convert(std::move(host), via_float ? std::optional<DType>(target) : std::nullopt, device);
}

namespace {

// --- module functions ----------------------------------------------------------------------------

using SizeFactory = Tensor (*)(IntArrayRef, DType, Device);

// The keyword-only options every factory takes, as PyTorch's do.
constexpr Param kDTypeParam = {.name = "dtype",
                               .type = ParamType::OptionalScalarType,
                               .keyword_only = true,
                               .default_value = Default::none()};
constexpr Param kDeviceParam = {.name = "device",
                                .type = ParamType::OptionalDevice,
                                .keyword_only = true,
                                .default_value = Default::none()};
constexpr Param kRequiresGradParam = {.name = "requires_grad",
                                      .type = ParamType::Bool,
                                      .keyword_only = true,
                                      .default_value = Default::boolean(false)};

// empty(*size, dtype=None, device=None, requires_grad=False) and its siblings. int[1]: one int
// stands for the list, by keyword (size=3) as by position.
constexpr Param kSizeFactoryParams[] = {
    {.name = "size", .type = ParamType::IntList, .list_size = 1},
    kDTypeParam,
    kDeviceParam,
    kRequiresGradParam,
};

// empty, zeros, ones, rand and randn: `name` calls `make` with the size.
template <const char* name, SizeFactory make>
PyObject* py_size_factory(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  return guarded([&]() -> PyObject* {
    static const std::string schema =
        std::string(name) +
        "(int[1] size, *, ScalarType? dtype=None, Device? device=None, "
        "bool requires_grad=False) -> Tensor";
    static const ArgParser parser(name, false, {Signature{schema.c_str(), kSizeFactoryParams}});
    ParsedArgs parsed;
    if (parser.parse(nullptr, args, nargs, kwnames, parsed) < 0) return nullptr;
    const DimVector sizes = parsed.int_list(0);
    const DType dtype = parsed.optional_scalar_type(1).value_or(kFloat32);
    const std::optional<Device> device = parsed.optional_device(2);
    const bool requires_grad = parsed.to_bool(3);
    return wrap_tensor(without_gil([&] {
      Tensor result = make(sizes, dtype, device.value_or(default_device()));
      if (requires_grad) result.requires_grad_(true);
      return result;
    }));
  });
}

PyObject* py_full(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  return guarded([&]() -> PyObject* {
    static constexpr Param params[] = {
        {.name = "size", .type = ParamType::IntList, .list_size = 1},
        {.name = "fill_value", .type = ParamType::Scalar},
        kDTypeParam,
        kDeviceParam,
        kRequiresGradParam,
    };
    static const ArgParser parser(
        "full", false,
        {Signature{"full(int[1] size, Scalar fill_value, *, ScalarType? dtype=None, "
                   "Device? device=None, bool requires_grad=False) -> Tensor",
                   params}});
    ParsedArgs parsed;
    if (parser.parse(nullptr, args, nargs, kwnames, parsed) < 0) return nullptr;
    const DimVector sizes = parsed.int_list(0);
    const Scalar value = parsed.scalar(1);
    const DType dtype = parsed.optional_scalar_type(2).value_or(value.default_dtype());
    const std::optional<Device> device = parsed.optional_device(3);
    const bool requires_grad = parsed.to_bool(4);
    return wrap_tensor(without_gil([&] {
      Tensor result = full(sizes, value, dtype, device.value_or(default_device()));
      if (requires_grad) result.requires_grad_(true);
      return result;
    }));
  });
}

// zeros_like(input, *, dtype=None, device=None, requires_grad=False) and its siblings; the
// new tensor has input's shape, and its dtype and device unless they are given.
constexpr Param kLikeFactoryParams[] = {
    {.name = "input", .type = ParamType::Tensor},
    kDTypeParam,
    kDeviceParam,
    kRequiresGradParam,
};

// empty_like and its siblings: `name` calls `make` with input's size.
template <const char* name, SizeFactory make>
PyObject* py_like_factory(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  return guarded([&]() -> PyObject* {
    static const std::string schema =
        std::string(name) +
        "(Tensor input, *, ScalarType? dtype=None, Device? device=None, "
        "bool requires_grad=False) -> Tensor";
    static const ArgParser parser(name, false, {Signature{schema.c_str(), kLikeFactoryParams}});
    ParsedArgs parsed;
    if (parser.parse(nullptr, args, nargs, kwnames, parsed) < 0) return nullptr;
    const Tensor& input = parsed.tensor(0);
    const DType dtype = parsed.optional_scalar_type(1).value_or(input.dtype());
    const Device device = parsed.optional_device(2).value_or(input.device());
    const bool requires_grad = parsed.to_bool(3);
    return wrap_tensor(without_gil([&] {
      Tensor result = make(input.sizes(), dtype, device);
      if (requires_grad) result.requires_grad_(true);
      return result;
    }));
  });
}

constexpr char kEmpty[] = "empty";
constexpr char kZeros[] = "zeros";
constexpr char kOnes[] = "ones";
constexpr char kRand[] = "rand";
constexpr char kRandn[] = "randn";
constexpr char kEmptyLike[] = "empty_like";
constexpr char kZerosLike[] = "zeros_like";
constexpr char kOnesLike[] = "ones_like";
constexpr char kRandLike[] = "rand_like";
constexpr char kRandnLike[] = "randn_like";

PyObject* py_full_like(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  return guarded([&]() -> PyObject* {
    static constexpr Param params[] = {
        {.name = "input", .type = ParamType::Tensor},
        {.name = "fill_value", .type = ParamType::Scalar},
        kDTypeParam,
        kDeviceParam,
        kRequiresGradParam,
    };
    static const ArgParser parser(
        "full_like", false,
        {Signature{"full_like(Tensor input, Scalar fill_value, *, ScalarType? dtype=None, "
                   "Device? device=None, bool requires_grad=False) -> Tensor",
                   params}});
    ParsedArgs parsed;
    if (parser.parse(nullptr, args, nargs, kwnames, parsed) < 0) return nullptr;
    const Tensor& input = parsed.tensor(0);
    const Scalar value = parsed.scalar(1);
    const DType dtype = parsed.optional_scalar_type(2).value_or(input.dtype());
    const Device device = parsed.optional_device(3).value_or(input.device());
    const bool requires_grad = parsed.to_bool(4);
    return wrap_tensor(without_gil([&] {
      Tensor result = full(input.sizes(), value, dtype, device);
      if (requires_grad) result.requires_grad_(true);
      return result;
    }));
  });
}

PyObject* py_tensor(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  return guarded([&]() -> PyObject* {
    static constexpr Param params[] = {
        {.name = "data", .type = ParamType::Object},
        kDTypeParam,
        kDeviceParam,
        kRequiresGradParam,
    };
    static const ArgParser parser(
        "tensor", false,
        {Signature{"tensor(Object data, *, ScalarType? dtype=None, Device? device=None, "
                   "bool requires_grad=False) -> Tensor",
                   params}});
    ParsedArgs parsed;
    if (parser.parse(nullptr, args, nargs, kwnames, parsed) < 0) return nullptr;
    const std::optional<DType> dtype = parsed.optional_scalar_type(1);
    const std::optional<Device> device = parsed.optional_device(2);
    const bool requires_grad = parsed.to_bool(3);
    Tensor result = tensor_from_data(parsed.object(0), dtype, device);
    if (requires_grad) without_gil([&] { result.requires_grad_(true); });
    return wrap_tensor(std::move(result));
  });
}

}  // namespace

PyMethodDef factory_functions[] = {
    {"tensor", as_method(py_tensor), kFastcall,
     "tensor(data, *, dtype=None, device=None, requires_grad=False) -> Tensor\n\n"
     "A tensor holding a copy of data: nested sequences of numbers, a number, a NumPy array\n"
     "(or any object with the buffer protocol or __dlpack__) or a Tensor. Without dtype, the\n"
     "data decides: float32 for Python floats, int64 for ints, bool for bools; an array keeps\n"
     "its own dtype."},
    {"empty", as_method(py_size_factory<kEmpty, &bp::empty>), kFastcall,
     "empty(*size, dtype=None, device=None, requires_grad=False) -> Tensor\n\n"
     "An uninitialised tensor of the size (ints, or one sequence of ints)."},
    {"zeros", as_method(py_size_factory<kZeros, &bp::zeros>), kFastcall,
     "zeros(*size, dtype=None, device=None, requires_grad=False) -> Tensor"},
    {"ones", as_method(py_size_factory<kOnes, &bp::ones>), kFastcall,
     "ones(*size, dtype=None, device=None, requires_grad=False) -> Tensor"},
    {"rand", as_method(py_size_factory<kRand, &bp::rand>), kFastcall,
     "rand(*size, dtype=None, device=None, requires_grad=False) -> Tensor\n\n"
     "Uniform values in [0, 1) from the generator that manual_seed seeds."},
    {"randn", as_method(py_size_factory<kRandn, &bp::randn>), kFastcall,
     "randn(*size, dtype=None, device=None, requires_grad=False) -> Tensor\n\n"
     "Standard normal values from the generator that manual_seed seeds."},
    {"full", as_method(py_full), kFastcall,
     "full(size, fill_value, *, dtype=None, device=None, requires_grad=False) -> Tensor\n\n"
     "Without dtype, fill_value decides it: bool, int64 for an int, float32 for a float."},
    {"empty_like", as_method(py_like_factory<kEmptyLike, &bp::empty>), kFastcall,
     "empty_like(input, *, dtype=None, device=None, requires_grad=False) -> Tensor"},
    {"zeros_like", as_method(py_like_factory<kZerosLike, &bp::zeros>), kFastcall,
     "zeros_like(input, *, dtype=None, device=None, requires_grad=False) -> Tensor"},
    {"ones_like", as_method(py_like_factory<kOnesLike, &bp::ones>), kFastcall,
     "ones_like(input, *, dtype=None, device=None, requires_grad=False) -> Tensor"},
    {"rand_like", as_method(py_like_factory<kRandLike, &bp::rand>), kFastcall,
     "rand_like(input, *, dtype=None, device=None, requires_grad=False) -> Tensor"},
    {"randn_like", as_method(py_like_factory<kRandnLike, &bp::randn>), kFastcall,
     "randn_like(input, *, dtype=None, device=None, requires_grad=False) -> Tensor"},
    {"full_like", as_method(py_full_like), kFastcall,
     "full_like(input, fill_value, *, dtype=None, device=None, requires_grad=False) -> Tensor"},
    {nullptr, nullptr, 0, nullptr},
};

}  // namespace bp::python
