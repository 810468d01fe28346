// Argument parsing for every Python function and method of backplane._C: each is a list of
// signatures (for an op, one per ops.yaml overload, in ops.yaml order); a call takes the first
// signature its arguments fit, then reads each argument as the C++ type the public API takes.
// bp-codegen writes the signature tables of the op bindings (python_functions.cpp), the
// hand-written functions declare theirs beside their code; nothing here knows a function.
#pragma once

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <backplane/backplane.h>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace bp::python {

// What a parameter accepts from Python; one per row of codegen's TypeCategory, plus the
// `out=` forms and the types that only hand-written functions take (after OutTensorTuple).
enum class ParamType : uint8_t {
  Tensor,
  OptionalTensor,
  TensorList,  // a list or tuple of Tensors
  Scalar,      // int, float or bool (not a Tensor)
  Int,         // int (or an object with __index__), not bool
  OptionalInt,
  IntList,  // a list or tuple of ints; a single int stands for a list of list_size;
            // as the only positional parameter, separate ints are the list: x.view(2, 3),
            // bp.zeros(2, 3)
  OptionalIntList,
  Bool,
  Float,  // float or int
  OptionalFloat,
  Str,
  ScalarType,  // a bp.dtype
  OptionalScalarType,
  Device,  // a bp.device or a string such as "cuda:0"
  OptionalDevice,
  OutTensor,       // out=: one Tensor
  OutTensorTuple,  // out=: a tuple of list_size Tensors
  OptionalBool,
  Tensors,          // a Tensor, or a list or tuple of Tensors
  OptionalTensors,  // as Tensors, and None, for the whole or for an item of the list
  Object,           // any object: the function reads it itself
};

// A parameter's default, converted by bp-codegen from the schema's spelling.
struct Default {
  enum class Kind : uint8_t { Required, None, Int, Float, Bool, Str, IntList };
  Kind kind = Kind::Required;
  int64_t int_value = 0;
  double float_value = 0;
  bool bool_value = false;
  const char* str_value = nullptr;
  int64_t list[4] = {};
  uint8_t list_length = 0;

  static constexpr Default none() { return {Kind::None}; }
  static constexpr Default integer(int64_t v) { return {Kind::Int, v}; }
  static constexpr Default floating(double v) { return {Kind::Float, 0, v}; }
  static constexpr Default boolean(bool v) { return {Kind::Bool, 0, 0, v}; }
  static constexpr Default string(const char* v) { return {Kind::Str, 0, 0, false, v}; }
  // int[] defaults: "[]" or "[1, 1]"; a single int ("stride=1") for an int[2] is written out
  // as the list it stands for.
  static constexpr Default int_list(std::initializer_list<int64_t> values) {
    Default d{Kind::IntList};
    for (int64_t v : values) d.list[d.list_length++] = v;
    return d;
  }
  bool is_required() const { return kind == Kind::Required; }
};

struct Param {
  const char* name;  // the Python name: the schema's, except `self` -> `input` in functions
  ParamType type;
  bool keyword_only = false;
  Default default_value = {};
  int64_t list_size = 0;  // int[2] -> 2; OutTensorTuple -> number of outputs; else 0
};

// One overload: its schema (for messages and docstrings) and its Python parameters, in order.
// For a method, params[0] is the receiver (`self`), filled from the object the method is
// called on, never from the arguments.
struct Signature {
  const char* schema;  // "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"
  std::span<const Param> params;
};

// The value of a Python int (or of an object with __index__), or nullopt when it lies outside
// int64. Any other failure raises a Python exception and throws PythonErrorSet.
std::optional<int64_t> python_int64(PyObject* object);

class ParsedArgs;

// The overloads of one Python function or method. Construct once (a function-local static);
// parse() is called at every call and allocates nothing when a signature fits.
class ArgParser {
 public:
  ArgParser(const char* python_name, bool is_method, std::initializer_list<Signature> signatures);

  // Fills `parsed` and returns the index of the first signature the call fits. When none
  // does, raises TypeError (or ValueError, for a value of the right type that is out of range
  // for every signature of that type) naming the function, the argument at fault and what each
  // signature accepts, and returns -1.
  // `self` is the receiver for methods and null for functions. args/nargs/kwnames are the
  // vectorcall convention (METH_FASTCALL | METH_KEYWORDS).
  int parse(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames,
            ParsedArgs& parsed) const;

  const char* python_name() const { return python_name_; }
  bool is_method() const { return is_method_; }
  std::span<const Signature> signatures() const { return signatures_; }

 private:
  const char* python_name_;
  bool is_method_;
  std::vector<Signature> signatures_;
  // Each signature's parameter names as interned strings, which keyword names given in source
  // code are too: a keyword is found by comparing pointers.
  std::vector<std::vector<PyObject*>> interned_names_;
};

// The arguments of one call, by parameter index of the signature parse() chose. Each reader
// converts the Python object (or the default, when the argument was not given) to the type
// the public C++ API takes; a value that cannot convert raises a Python exception and throws
// bp::python::PythonErrorSet (see errors.h).
class ParsedArgs {
 public:
  static constexpr size_t kMaxParams = 16;

  // The tensor of the object given, which the caller holds for the length of the call.
  const Tensor& tensor(size_t i) const;
  std::optional<Tensor> optional_tensor(size_t i) const;
  std::vector<Tensor> tensor_list(size_t i) const;
  Scalar scalar(size_t i) const;
  int64_t to_int(size_t i) const;
  std::optional<int64_t> optional_int(size_t i) const;
  DimVector int_list(size_t i) const;
  std::optional<DimVector> optional_int_list(size_t i) const;
  bool to_bool(size_t i) const;
  std::optional<bool> optional_bool(size_t i) const;
  double to_double(size_t i) const;
  std::optional<double> optional_double(size_t i) const;
  std::string_view string(size_t i) const;
  DType scalar_type(size_t i) const;
  std::optional<DType> optional_scalar_type(size_t i) const;
  Device device(size_t i) const;
  std::optional<Device> optional_device(size_t i) const;
  // A Tensors or OptionalTensors parameter as a list: a lone Tensor is a list of one, a None
  // item an undefined Tensor, None (or no argument) the empty list.
  std::vector<Tensor> tensors(size_t i) const;
  // The object given for parameter i (borrowed), or None when it was not given: an Object
  // parameter's value, or one the function reads itself (a seed beyond int64).
  PyObject* object(size_t i) const;
  // out=(a, b): the k-th tensor of an OutTensorTuple parameter.
  Tensor out_tensor(size_t i, size_t k) const;
  // The Python object given for parameter i (a new reference), for ops that return an
  // argument itself (in-place ops and out=): Python callers get back the object they passed.
  PyObject* returned_argument(size_t i) const;
  // The result of a view op of the tensor given for parameter i (a new reference): that very
  // object when the op returned its tensor itself, else a new bp.Tensor.
  PyObject* wrap_view(size_t i, Tensor result) const;

 private:
  friend class ArgParser;
  const ArgParser* parser_ = nullptr;
  const Signature* signature_ = nullptr;
  // Borrowed; null where the default applies. Left uninitialised here, as zeroing the whole
  // array costs a call more than parsing it: parse() sets the chosen signature's entries.
  PyObject* values_[kMaxParams];
  // x.view(2, 3): the positional arguments that together are the one int list parameter
  // `varargs_param_` (its values_ entry holds the first of them).
  PyObject* const* varargs_ = nullptr;
  Py_ssize_t varargs_count_ = 0;
  size_t varargs_param_ = kMaxParams;
};

}  // namespace bp::python
