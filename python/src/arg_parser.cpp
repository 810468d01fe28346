#include "arg_parser.h"

#include "device_object.h"
#include "dtype_object.h"
#include "errors.h"
#include "python_tensor.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

namespace bp::python {
namespace {

// Why a signature does not fit a call. A wrong type (or a missing, unknown or surplus argument)
// is a TypeError; a value of the right type that the signature cannot take (a list of the wrong
// length) is a ValueError. OutForm: the call is for the out= overload and this is the
// functional one, or the other way round; such a signature is left out of the message when
// another one says more.
enum class Failure : uint8_t { None, Type, Value, OutForm };

bool is_out(ParamType type) {
  return type == ParamType::OutTensor || type == ParamType::OutTensorTuple;
}

bool is_tensor_object(PyObject* object) {
  return Py_TYPE(object) == tensor_type || PyObject_TypeCheck(object, tensor_type);
}

// Objects that convert to a number without being sequences: NumPy's scalars do, NumPy's arrays
// and bp.Tensor (which have __index__ and __float__ for one element) do not count.
bool is_number_like(PyObject* object) {
  if (is_tensor_object(object)) return false;
  PyTypeObject* type = Py_TYPE(object);
  if (type->tp_as_sequence != nullptr && type->tp_as_sequence->sq_length != nullptr) return false;
  if (type->tp_as_mapping != nullptr && type->tp_as_mapping->mp_length != nullptr) return false;
  return PyIndex_Check(object) ||
         (type->tp_as_number != nullptr && type->tp_as_number->nb_float != nullptr);
}

bool is_int(PyObject* object) {
  if (PyLong_CheckExact(object)) return true;
  if (PyBool_Check(object)) return false;
  return PyLong_Check(object) || (PyIndex_Check(object) && is_number_like(object));
}

bool is_float(PyObject* object) {
  if (PyFloat_CheckExact(object) || PyLong_CheckExact(object)) return true;
  if (PyBool_Check(object)) return false;
  return PyFloat_Check(object) || PyLong_Check(object) || is_number_like(object);
}

bool is_scalar(PyObject* object) {
  return PyFloat_CheckExact(object) || PyLong_Check(object) || PyFloat_Check(object) ||
         is_number_like(object);
}

bool is_sequence(PyObject* object) { return PyList_Check(object) || PyTuple_Check(object); }

// Index of the first item that is not an int, or -1.
Py_ssize_t first_non_int(PyObject* sequence) {
  const Py_ssize_t n = PySequence_Fast_GET_SIZE(sequence);
  PyObject** items = PySequence_Fast_ITEMS(sequence);
  for (Py_ssize_t k = 0; k < n; ++k) {
    if (!is_int(items[k])) return k;
  }
  return -1;
}

// Index of the first item that is not a Tensor (nor None, where `none_allowed`), or -1.
Py_ssize_t first_non_tensor(PyObject* sequence, bool none_allowed = false) {
  const Py_ssize_t n = PySequence_Fast_GET_SIZE(sequence);
  PyObject** items = PySequence_Fast_ITEMS(sequence);
  for (Py_ssize_t k = 0; k < n; ++k) {
    if (!is_tensor_object(items[k]) && !(none_allowed && items[k] == Py_None)) return k;
  }
  return -1;
}

std::string type_name(PyObject* object) {
  if (is_tensor_object(object)) return "Tensor";
  return Py_TYPE(object)->tp_name;
}

// What a parameter accepts, as the messages say it.
std::string accepted(const Param& param) {
  const std::string ints = param.list_size > 1
                               ? "a list of " + std::to_string(param.list_size) + " ints"
                               : "a list of ints";
  switch (param.type) {
    case ParamType::Tensor:
    case ParamType::OutTensor: return "Tensor";
    case ParamType::OptionalTensor: return "Tensor or None";
    case ParamType::TensorList: return "a list or tuple of Tensors";
    case ParamType::Scalar: return "a number (int, float or bool)";
    case ParamType::Int: return "int";
    case ParamType::OptionalInt: return "int or None";
    case ParamType::IntList: return param.list_size > 0 ? "an int or " + ints : ints;
    case ParamType::OptionalIntList:
      return param.list_size > 0 ? "an int, " + ints + " or None" : ints + " or None";
    case ParamType::Bool: return "bool";
    case ParamType::Float: return "float";
    case ParamType::OptionalFloat: return "float or None";
    case ParamType::Str: return "str";
    case ParamType::ScalarType: return "dtype";
    case ParamType::OptionalScalarType: return "dtype or None";
    case ParamType::Device: return "device or str";
    case ParamType::OptionalDevice: return "device, str or None";
    case ParamType::OutTensorTuple:
      return "a tuple of " + std::to_string(param.list_size) + " Tensors";
    case ParamType::OptionalBool: return "bool or None";
    case ParamType::Tensors: return "a Tensor or a list or tuple of Tensors";
    case ParamType::OptionalTensors:
      return "a Tensor, a list or tuple of Tensors (or None) or None";
    case ParamType::Object: return "any object";
  }
  return "?";
}

// The parameter's type as Python annotations spell it, for the list of signatures.
std::string annotation(const Param& param) {
  switch (param.type) {
    case ParamType::Tensor:
    case ParamType::OutTensor: return "Tensor";
    case ParamType::OptionalTensor: return "Tensor | None";
    case ParamType::TensorList: return "Sequence[Tensor]";
    case ParamType::Scalar: return "Number";
    case ParamType::Int: return "int";
    case ParamType::OptionalInt: return "int | None";
    case ParamType::IntList: return param.list_size > 0 ? "int | Sequence[int]" : "Sequence[int]";
    case ParamType::OptionalIntList:
      return param.list_size > 0 ? "int | Sequence[int] | None" : "Sequence[int] | None";
    case ParamType::Bool: return "bool";
    case ParamType::Float: return "float";
    case ParamType::OptionalFloat: return "float | None";
    case ParamType::Str: return "str";
    case ParamType::ScalarType: return "dtype";
    case ParamType::OptionalScalarType: return "dtype | None";
    case ParamType::Device: return "device | str";
    case ParamType::OptionalDevice: return "device | str | None";
    case ParamType::OutTensorTuple: return "tuple[Tensor, ...]";
    case ParamType::OptionalBool: return "bool | None";
    case ParamType::Tensors: return "Tensor | Sequence[Tensor]";
    case ParamType::OptionalTensors: return "Tensor | Sequence[Tensor | None] | None";
    case ParamType::Object: return "Any";
  }
  return "?";
}

std::string default_text(const Default& value) {
  switch (value.kind) {
    case Default::Kind::Required: return "";
    case Default::Kind::None: return "None";
    case Default::Kind::Int: return std::to_string(value.int_value);
    case Default::Kind::Float: {
      char* text = PyOS_double_to_string(value.float_value, 'r', 0, 0, nullptr);
      if (text == nullptr) return "?";
      std::string result(text);
      PyMem_Free(text);
      return result;
    }
    case Default::Kind::Bool: return value.bool_value ? "True" : "False";
    case Default::Kind::Str: return std::string("'") + value.str_value + "'";
    case Default::Kind::IntList: {
      std::string result = "[";
      for (uint8_t k = 0; k < value.list_length; ++k) {
        if (k > 0) result += ", ";
        result += std::to_string(value.list[k]);
      }
      return result + "]";
    }
  }
  return "";
}

std::string python_signature(const Signature& signature, size_t first) {
  std::string text = "(";
  bool keyword_only = false;
  for (size_t i = first; i < signature.params.size(); ++i) {
    const Param& param = signature.params[i];
    if (i > first) text += ", ";
    if (param.keyword_only && !keyword_only) {
      text += "*, ";
      keyword_only = true;
    }
    text += param.name;
    text += ": " + annotation(param);
    if (!param.default_value.is_required()) text += " = " + default_text(param.default_value);
  }
  return text + ")";
}

// Edit distance with transpositions (optimal string alignment), for "did you mean".
size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

std::string utf8(PyObject* text) {
  Py_ssize_t size = 0;
  const char* data = PyUnicode_Check(text) ? PyUnicode_AsUTF8AndSize(text, &size) : nullptr;
  if (data == nullptr) {
    PyErr_Clear();
    return "?";
  }
  return std::string(data, static_cast<size_t>(size));
}

// The signature's position of parameter i as Python counts it (from 1, the receiver of a
// method not counted), as text for messages: " (position 2)", or "" for keyword-only ones.
std::string position_text(const Param& param, size_t i, size_t first) {
  if (param.keyword_only) return "";
  return " (position " + std::to_string(i - first + 1) + ")";
}

// Whether `object` has the type `param` takes; a value that has the type but not a value the
// parameter takes (a list of the wrong length) is Failure::Value. `reason` is filled only when
// not null.
Failure check_value(const Param& param, size_t i, size_t first, PyObject* object, bool spread,
                    std::string* reason) {
  auto wrong_type = [&](const std::string& detail = "") {
    if (reason != nullptr) {
      *reason = "argument '" + std::string(param.name) + "'" + position_text(param, i, first) +
                " must be " + accepted(param) + ", not " + type_name(object) + detail;
    }
    return Failure::Type;
  };
  auto wrong_value = [&](const std::string& got) {
    if (reason != nullptr) {
      *reason = "argument '" + std::string(param.name) + "'" + position_text(param, i, first) +
                " must be " + accepted(param) + ", got " + got;
    }
    return Failure::Value;
  };
  const bool none = object == Py_None;
  switch (param.type) {
    case ParamType::OptionalTensor:
      if (none) return Failure::None;
      [[fallthrough]];
    case ParamType::Tensor:
    case ParamType::OutTensor: return is_tensor_object(object) ? Failure::None : wrong_type();
    case ParamType::TensorList: {
      if (!is_sequence(object)) return wrong_type();
      const Py_ssize_t bad = first_non_tensor(object);
      if (bad < 0) return Failure::None;
      return wrong_type(" (item " + std::to_string(bad) + " is " +
                        type_name(PySequence_Fast_ITEMS(object)[bad]) + ")");
    }
    case ParamType::OutTensorTuple: {
      if (!is_sequence(object)) return wrong_type();
      const Py_ssize_t bad = first_non_tensor(object);
      if (bad >= 0) {
        return wrong_type(" (item " + std::to_string(bad) + " is " +
                          type_name(PySequence_Fast_ITEMS(object)[bad]) + ")");
      }
      const Py_ssize_t n = PySequence_Fast_GET_SIZE(object);
      if (n == param.list_size) return Failure::None;
      return wrong_value("a " + type_name(object) + " of " + std::to_string(n));
    }
    case ParamType::Scalar: return is_scalar(object) ? Failure::None : wrong_type();
    case ParamType::OptionalInt:
      if (none) return Failure::None;
      [[fallthrough]];
    case ParamType::Int: return is_int(object) ? Failure::None : wrong_type();
    case ParamType::OptionalIntList:
      if (none) return Failure::None;
      [[fallthrough]];
    case ParamType::IntList: {
      if (spread) return Failure::None;  // the items were checked as the spread arguments
      if (is_int(object)) return param.list_size > 0 ? Failure::None : wrong_type();
      if (!is_sequence(object)) return wrong_type();
      const Py_ssize_t bad = first_non_int(object);
      if (bad >= 0) {
        return wrong_type(" (item " + std::to_string(bad) + " is " +
                          type_name(PySequence_Fast_ITEMS(object)[bad]) + ")");
      }
      const Py_ssize_t n = PySequence_Fast_GET_SIZE(object);
      // int[1] only says that one int may stand for the list: any length is taken, as in
      // PyTorch; int[2] and longer fix the length.
      if (param.list_size <= 1 || n == param.list_size) return Failure::None;
      return wrong_value("a " + type_name(object) + " of " + std::to_string(n));
    }
    case ParamType::OptionalBool:
      if (none) return Failure::None;
      [[fallthrough]];
    case ParamType::Bool: return PyBool_Check(object) ? Failure::None : wrong_type();
    case ParamType::OptionalFloat:
      if (none) return Failure::None;
      [[fallthrough]];
    case ParamType::Float: return is_float(object) ? Failure::None : wrong_type();
    case ParamType::Str: return PyUnicode_Check(object) ? Failure::None : wrong_type();
    case ParamType::OptionalScalarType:
      if (none) return Failure::None;
      [[fallthrough]];
    case ParamType::ScalarType: return is_dtype(object) ? Failure::None : wrong_type();
    case ParamType::OptionalDevice:
      if (none) return Failure::None;
      [[fallthrough]];
    case ParamType::Device:
      return is_device(object) || PyUnicode_Check(object) ? Failure::None : wrong_type();
    case ParamType::OptionalTensors:
      if (none) return Failure::None;
      [[fallthrough]];
    case ParamType::Tensors: {
      if (is_tensor_object(object)) return Failure::None;
      if (!is_sequence(object)) return wrong_type();
      const Py_ssize_t bad = first_non_tensor(object, param.type == ParamType::OptionalTensors);
      if (bad < 0) return Failure::None;
      return wrong_type(" (item " + std::to_string(bad) + " is " +
                        type_name(PySequence_Fast_ITEMS(object)[bad]) + ")");
    }
    case ParamType::Object: return Failure::None;
  }
  return wrong_type();
}

}  // namespace

std::optional<int64_t> python_int64(PyObject* object) {
  PyObject* integer = PyLong_Check(object) ? Py_NewRef(object) : PyNumber_Index(object);
  if (integer == nullptr) throw PythonErrorSet();
  int overflow = 0;
  const long long value = PyLong_AsLongLongAndOverflow(integer, &overflow);
  Py_DECREF(integer);
  if (overflow != 0) return std::nullopt;
  if (value == -1 && PyErr_Occurred()) throw PythonErrorSet();
  return value;
}

ArgParser::ArgParser(const char* python_name, bool is_method,
                     std::initializer_list<Signature> signatures)
    : python_name_(python_name), is_method_(is_method), signatures_(signatures) {
  if (signatures_.empty()) {
    throw std::logic_error(std::string(python_name) + ": an argument parser needs a signature");
  }
  for (const Signature& signature : signatures_) {
    if (signature.params.size() > ParsedArgs::kMaxParams) {
      throw std::logic_error(std::string(python_name) + ": the signature " + signature.schema +
                             " has more parameters than the Python argument parser holds (" +
                             std::to_string(ParsedArgs::kMaxParams) + ")");
    }
    std::vector<PyObject*> names;
    for (const Param& param : signature.params) {
      PyObject* name = PyUnicode_InternFromString(param.name);
      if (name == nullptr) throw PythonErrorSet();
      names.push_back(name);  // kept for the life of the process, as the parser is
    }
    interned_names_.push_back(std::move(names));
  }
}

namespace {

struct Call {
  PyObject* self;
  PyObject* const* args;
  Py_ssize_t nargs;
  PyObject* kwnames;
};

// Fits a call to one signature, filling `parsed`. Allocates nothing unless `reason` is given,
// where it writes why the call does not fit.
Failure fit(const Signature& signature, const std::vector<PyObject*>& names, bool is_method,
            const Call& call, PyObject** values, PyObject* const*& varargs,
            Py_ssize_t& varargs_count, size_t& varargs_param, std::string* reason) {
  const size_t n_params = signature.params.size();
  // Entries past n_params may hold a longer signature's arguments: the readers never look there.
  std::fill(values, values + n_params, nullptr);
  varargs = nullptr;
  varargs_count = 0;
  varargs_param = ParsedArgs::kMaxParams;
  const size_t first = is_method ? 1 : 0;
  if (is_method) values[0] = call.self;

  size_t n_positional = 0;
  while (first + n_positional < n_params && !signature.params[first + n_positional].keyword_only)
    ++n_positional;

  // x.view(2, 3): the only positional parameter is an int list, given as separate ints.
  bool spread = false;
  if (n_positional == 1 && signature.params[first].type == ParamType::IntList &&
      (call.nargs > 1 ||
       (call.nargs == 1 && signature.params[first].list_size == 0 && is_int(call.args[0])))) {
    for (Py_ssize_t k = 0; k < call.nargs; ++k) {
      if (!is_int(call.args[k])) {
        if (reason != nullptr) {
          *reason = "argument '" + std::string(signature.params[first].name) +
                    "' (position 1) must be " + accepted(signature.params[first]) +
                    " or ints as separate arguments, but argument " + std::to_string(k + 1) +
                    " is " + type_name(call.args[k]);
        }
        return Failure::Type;
      }
    }
    spread = true;
    values[first] = call.args[0];
    varargs = call.args;
    varargs_count = call.nargs;
    varargs_param = first;
  } else if (static_cast<size_t>(call.nargs) > n_positional) {
    if (reason != nullptr) {
      *reason = "takes " + std::to_string(n_positional) + " positional argument" +
                (n_positional == 1 ? "" : "s") + " but " + std::to_string(call.nargs) +
                (call.nargs == 1 ? " was" : " were") + " given";
    }
    return Failure::Type;
  } else {
    for (Py_ssize_t k = 0; k < call.nargs; ++k) values[first + k] = call.args[k];
  }

  const Py_ssize_t n_keywords = call.kwnames == nullptr ? 0 : PyTuple_GET_SIZE(call.kwnames);
  for (Py_ssize_t k = 0; k < n_keywords; ++k) {
    PyObject* key = PyTuple_GET_ITEM(call.kwnames, k);
    size_t found = n_params;
    for (size_t i = first; i < n_params; ++i) {
      if (names[i] == key) {
        found = i;
        break;
      }
    }
    if (found == n_params) {
      for (size_t i = first; i < n_params; ++i) {
        if (PyUnicode_Compare(names[i], key) == 0) {
          found = i;
          break;
        }
      }
    }
    if (found == n_params) {
      if (reason != nullptr) {
        const std::string given = utf8(key);
        *reason = "got an unexpected keyword argument '" + given + "'";
        std::string_view best;
        size_t best_distance = std::max<size_t>(2, given.size() / 3) + 1;
        for (size_t i = first; i < n_params; ++i) {
          const std::string_view candidate = signature.params[i].name;
          const size_t distance = edit_distance(given, candidate);
          if (distance < best_distance) {
            best = candidate;
            best_distance = distance;
          }
        }
        if (!best.empty()) *reason += "; did you mean '" + std::string(best) + "'?";
      }
      return PyUnicode_CompareWithASCIIString(key, "out") == 0 ? Failure::OutForm : Failure::Type;
    }
    if (values[found] != nullptr) {
      if (reason != nullptr) {
        *reason =
            "got multiple values for argument '" + std::string(signature.params[found].name) + "'";
      }
      return Failure::Type;
    }
    values[found] = call.args[call.nargs + k];
  }

  for (size_t i = first; i < n_params; ++i) {
    const Param& param = signature.params[i];
    if (values[i] == nullptr && param.default_value.is_required()) {
      if (reason != nullptr) {
        *reason = std::string("missing required ") + (param.keyword_only ? "keyword " : "") +
                  "argument '" + param.name + "'" + position_text(param, i, first);
      }
      return is_out(param.type) ? Failure::OutForm : Failure::Type;
    }
  }
  for (size_t i = first; i < n_params; ++i) {
    if (values[i] == nullptr) continue;
    const Failure failure =
        check_value(signature.params[i], i, first, values[i], spread && i == varargs_param, reason);
    if (failure != Failure::None) return failure;
  }
  return Failure::None;
}

std::string describe_call(const Call& call) {
  std::string text = "(";
  for (Py_ssize_t k = 0; k < call.nargs; ++k) {
    if (k > 0) text += ", ";
    text += type_name(call.args[k]);
  }
  const Py_ssize_t n_keywords = call.kwnames == nullptr ? 0 : PyTuple_GET_SIZE(call.kwnames);
  for (Py_ssize_t k = 0; k < n_keywords; ++k) {
    if (k > 0 || call.nargs > 0) text += ", ";
    text += utf8(PyTuple_GET_ITEM(call.kwnames, k)) + "=" + type_name(call.args[call.nargs + k]);
  }
  return text + ")";
}

// "add(): argument ..." but "add() got ...", "add() missing ...", as Python words them.
std::string with_name(const char* name, const std::string& reason) {
  const bool about_argument = reason.rfind("argument", 0) == 0;
  return std::string(name) + (about_argument ? "(): " : "() ") + reason;
}

}  // namespace

int ArgParser::parse(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames,
                     ParsedArgs& parsed) const {
  const Call call{self, args, nargs, kwnames};
  parsed.parser_ = this;
  for (size_t k = 0; k < signatures_.size(); ++k) {
    if (fit(signatures_[k], interned_names_[k], is_method_, call, parsed.values_, parsed.varargs_,
            parsed.varargs_count_, parsed.varargs_param_, nullptr) == Failure::None) {
      parsed.signature_ = &signatures_[k];
      return static_cast<int>(k);
    }
  }

  // No signature fits: say why for each.
  std::vector<std::string> reasons(signatures_.size());
  std::vector<Failure> failures(signatures_.size());
  for (size_t k = 0; k < signatures_.size(); ++k) {
    failures[k] = fit(signatures_[k], interned_names_[k], is_method_, call, parsed.values_,
                      parsed.varargs_, parsed.varargs_count_, parsed.varargs_param_, &reasons[k]);
  }
  parsed.signature_ = nullptr;
  const bool only_out_forms = std::all_of(failures.begin(), failures.end(),
                                          [](Failure f) { return f == Failure::OutForm; });
  std::vector<size_t> shown;
  for (size_t k = 0; k < signatures_.size(); ++k) {
    if (only_out_forms || failures[k] != Failure::OutForm) shown.push_back(k);
  }
  const bool all_values = std::all_of(shown.begin(), shown.end(),
                                      [&](size_t k) { return failures[k] == Failure::Value; });
  PyObject* exception = all_values ? PyExc_ValueError : PyExc_TypeError;
  const bool one_reason = std::all_of(shown.begin(), shown.end(),
                                      [&](size_t k) { return reasons[k] == reasons[shown[0]]; });
  if (one_reason) {
    PyErr_SetString(exception, with_name(python_name_, reasons[shown[0]]).c_str());
    return -1;
  }
  std::string message = std::string(python_name_) +
                        "() received an invalid combination of arguments " + describe_call(call) +
                        "; it accepts:";
  const size_t first = is_method_ ? 1 : 0;
  for (size_t k : shown) {
    message += "\n * " + python_signature(signatures_[k], first) + "\n     " + reasons[k];
  }
  PyErr_SetString(exception, message.c_str());
  return -1;
}

// ---------------------------------------------------------------------------------------------
// Readers

namespace {

[[noreturn]] void raise(PyObject* exception, const std::string& message) {
  PyErr_SetString(exception, message.c_str());
  throw PythonErrorSet();
}

// `what()` makes the start of the message only when there is a message to give: an op call
// does not pay for text it never shows.
template <typename What>
int64_t read_int64(PyObject* object, const What& what) {
  if (const std::optional<int64_t> value = python_int64(object)) return *value;
  raise(PyExc_OverflowError, what() + " is out of the range of a 64-bit signed integer");
}

double read_double(PyObject* object) {
  if (PyFloat_CheckExact(object)) return PyFloat_AS_DOUBLE(object);
  const double value = PyFloat_AsDouble(object);
  if (value == -1.0 && PyErr_Occurred()) throw PythonErrorSet();
  return value;
}

}  // namespace

// "add(): argument 'alpha' (position 3)", the start of a reader's messages.
static std::string describe_argument(const ArgParser& parser, const Signature& signature,
                                     size_t i) {
  const size_t first = parser.is_method() ? 1 : 0;
  const Param& param = signature.params[i];
  return std::string(parser.python_name()) + "(): argument '" + param.name + "'" +
         (i < first ? "" : position_text(param, i, first));
}

const Tensor& ParsedArgs::tensor(size_t i) const { return unwrap_tensor(values_[i]); }

std::optional<Tensor> ParsedArgs::optional_tensor(size_t i) const {
  if (values_[i] == nullptr || values_[i] == Py_None) return std::nullopt;
  return unwrap_tensor(values_[i]);
}

std::vector<Tensor> ParsedArgs::tensor_list(size_t i) const {
  PyObject* sequence = values_[i];
  const Py_ssize_t n = PySequence_Fast_GET_SIZE(sequence);
  PyObject** items = PySequence_Fast_ITEMS(sequence);
  std::vector<Tensor> tensors;
  tensors.reserve(static_cast<size_t>(n));
  for (Py_ssize_t k = 0; k < n; ++k) tensors.push_back(unwrap_tensor(items[k]));
  return tensors;
}

Scalar ParsedArgs::scalar(size_t i) const {
  PyObject* object = values_[i];
  if (object == nullptr) {
    const Default& value = signature_->params[i].default_value;
    switch (value.kind) {
      case Default::Kind::Bool: return Scalar(value.bool_value);
      case Default::Kind::Float: return Scalar(value.float_value);
      default: return Scalar(value.int_value);
    }
  }
  if (PyFloat_CheckExact(object)) return Scalar(PyFloat_AS_DOUBLE(object));
  if (PyBool_Check(object)) return Scalar(object == Py_True);
  if (PyLong_Check(object) || PyIndex_Check(object)) {
    return Scalar(read_int64(object, [&] { return describe_argument(*parser_, *signature_, i); }));
  }
  return Scalar(read_double(object));
}

int64_t ParsedArgs::to_int(size_t i) const {
  PyObject* object = values_[i];
  if (object == nullptr) return signature_->params[i].default_value.int_value;
  return read_int64(object, [&] { return describe_argument(*parser_, *signature_, i); });
}

std::optional<int64_t> ParsedArgs::optional_int(size_t i) const {
  PyObject* object = values_[i];
  if (object == nullptr) {
    const Default& value = signature_->params[i].default_value;
    if (value.kind == Default::Kind::Int) return value.int_value;
    return std::nullopt;
  }
  if (object == Py_None) return std::nullopt;
  return read_int64(object, [&] { return describe_argument(*parser_, *signature_, i); });
}

DimVector ParsedArgs::int_list(size_t i) const {
  PyObject* object = values_[i];
  const Param& param = signature_->params[i];
  if (object == nullptr) {
    return DimVector(IntArrayRef(param.default_value.list, param.default_value.list_length));
  }
  auto what = [&] { return describe_argument(*parser_, *signature_, i); };
  DimVector result;
  if (i == varargs_param_) {
    for (Py_ssize_t k = 0; k < varargs_count_; ++k) result.push_back(read_int64(varargs_[k], what));
    return result;
  }
  if (!is_sequence(object)) {
    const int64_t value = read_int64(object, what);
    result.assign(static_cast<size_t>(param.list_size), value);
    return result;
  }
  const Py_ssize_t n = PySequence_Fast_GET_SIZE(object);
  PyObject** items = PySequence_Fast_ITEMS(object);
  for (Py_ssize_t k = 0; k < n; ++k) {
    result.push_back(read_int64(items[k], what));
  }
  return result;
}

std::optional<DimVector> ParsedArgs::optional_int_list(size_t i) const {
  PyObject* object = values_[i];
  if (object == Py_None) return std::nullopt;
  if (object == nullptr && signature_->params[i].default_value.kind != Default::Kind::IntList) {
    return std::nullopt;
  }
  return int_list(i);
}

bool ParsedArgs::to_bool(size_t i) const {
  PyObject* object = values_[i];
  if (object == nullptr) return signature_->params[i].default_value.bool_value;
  return object == Py_True;
}

std::optional<bool> ParsedArgs::optional_bool(size_t i) const {
  PyObject* object = values_[i];
  if (object == Py_None) return std::nullopt;
  if (object == nullptr) {
    const Default& value = signature_->params[i].default_value;
    if (value.kind != Default::Kind::Bool) return std::nullopt;
    return value.bool_value;
  }
  return object == Py_True;
}

double ParsedArgs::to_double(size_t i) const {
  PyObject* object = values_[i];
  if (object == nullptr) {
    const Default& value = signature_->params[i].default_value;
    return value.kind == Default::Kind::Int ? static_cast<double>(value.int_value)
                                            : value.float_value;
  }
  return read_double(object);
}

std::optional<double> ParsedArgs::optional_double(size_t i) const {
  PyObject* object = values_[i];
  if (object == Py_None) return std::nullopt;
  if (object == nullptr) {
    const Default::Kind kind = signature_->params[i].default_value.kind;
    if (kind != Default::Kind::Float && kind != Default::Kind::Int) return std::nullopt;
  }
  return to_double(i);
}

std::string_view ParsedArgs::string(size_t i) const {
  PyObject* object = values_[i];
  if (object == nullptr) {
    const char* value = signature_->params[i].default_value.str_value;
    return value == nullptr ? std::string_view() : std::string_view(value);
  }
  Py_ssize_t size = 0;
  const char* data = PyUnicode_AsUTF8AndSize(object, &size);
  if (data == nullptr) throw PythonErrorSet();
  return std::string_view(data, static_cast<size_t>(size));
}

DType ParsedArgs::scalar_type(size_t i) const { return unwrap_dtype(values_[i]); }

std::optional<DType> ParsedArgs::optional_scalar_type(size_t i) const {
  if (values_[i] == nullptr || values_[i] == Py_None) return std::nullopt;
  return unwrap_dtype(values_[i]);
}

Device ParsedArgs::device(size_t i) const {
  if (values_[i] == nullptr) return default_device();
  return device_from_python(values_[i], describe_argument(*parser_, *signature_, i).c_str());
}

std::optional<Device> ParsedArgs::optional_device(size_t i) const {
  if (values_[i] == nullptr || values_[i] == Py_None) return std::nullopt;
  return device(i);
}

std::vector<Tensor> ParsedArgs::tensors(size_t i) const {
  PyObject* object = values_[i];
  if (object == nullptr || object == Py_None) return {};
  if (is_tensor_object(object)) return {unwrap_tensor(object)};
  const Py_ssize_t n = PySequence_Fast_GET_SIZE(object);
  PyObject** items = PySequence_Fast_ITEMS(object);
  std::vector<Tensor> result(static_cast<size_t>(n));
  for (Py_ssize_t k = 0; k < n; ++k) {
    if (items[k] != Py_None) result[static_cast<size_t>(k)] = unwrap_tensor(items[k]);
  }
  return result;
}

PyObject* ParsedArgs::object(size_t i) const {
  return values_[i] == nullptr ? Py_None : values_[i];
}

Tensor ParsedArgs::out_tensor(size_t i, size_t k) const {
  return unwrap_tensor(PySequence_Fast_ITEMS(values_[i])[k]);
}

PyObject* ParsedArgs::returned_argument(size_t i) const { return Py_NewRef(values_[i]); }

PyObject* ParsedArgs::wrap_view(size_t i, Tensor result) const {
  PyObject* viewed = values_[i];
  if (viewed != nullptr && is_tensor(viewed) && unwrap_tensor(viewed).impl() == result.impl()) {
    return Py_NewRef(viewed);
  }
  return wrap_tensor(std::move(result));
}

}  // namespace bp::python
