#include "gen_python.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <optional>

#include "code_template.h"
#include "cpp_types.h"
#include "diagnostics.h"
#include "embedded_templates.h"
#include "gen_core.h"
#include "signatures.h"

namespace bp::codegen {

namespace {

// Limits of the tables that python/src/arg_parser.h reads.
constexpr size_t kMaxParams = 16;            // ParsedArgs::kMaxParams
constexpr size_t kMaxDefaultListLength = 4;  // Default::list

// Names that the generated bindings use themselves, so that no argument's local may take them.
constexpr std::string_view kReservedLocals[] = {
    "args", "nargs", "kwnames", "parser", "parsed", "bp", "wrap", "without_gil", "guarded",
};

constexpr std::string_view kPythonKeywords[] = {
    "False", "None",     "True",  "and",    "as",   "assert", "async",  "await",    "break",
    "class", "continue", "def",   "del",    "elif", "else",   "except", "finally",  "for",
    "from",  "global",   "if",    "import", "in",   "is",     "lambda", "nonlocal", "not",
    "or",    "pass",     "raise", "return", "try",  "while",  "with",   "yield",
};

template <typename Range>
bool contains(const Range& range, std::string_view value) {
  return std::find(std::begin(range), std::end(range), value) != std::end(range);
}

// One Python parameter of a signature: a schema argument, or `out`, which holds every out=
// argument of the schema.
struct PythonParam {
  std::string name;
  const Argument* argument = nullptr;  // null for `out`
  std::vector<const Argument*> outs;   // `out`'s arguments, in schema order
  bool keyword_only = false;

  bool is_out() const { return argument == nullptr; }
};

// One overload of a Python function or method: an ops.yaml entry.
struct PythonSignature {
  const NativeFunction* function = nullptr;
  std::vector<PythonParam> params;  // a method's params[0] is its receiver, `self`
};

// bp.<name> or Tensor.<name>: the entries of one operator name, in ops.yaml order.
struct PythonCallable {
  std::string name;
  bool is_method = false;
  std::vector<PythonSignature> signatures;

  std::string cpp_name() const { return (is_method ? "method_" : "function_") + name; }
};

// The result type of ops whose returns all have names: backplane.return_types.<name>.
struct NamedReturnType {
  std::string op;    // the operator name
  std::string name;  // "max"; "<op>_<overload>" for a second set of names of one operator
  std::vector<std::string> fields;

  std::string cpp_function() const { return "return_type_" + name; }
  std::string stub_class() const { return "_return_types_" + name; }
};

// Everything both outputs are made from, computed once from the model.
struct PythonBindings {
  std::string source;
  std::vector<PythonCallable> functions;
  std::vector<PythonCallable> methods;
  std::vector<NamedReturnType> return_types;
  std::vector<const NativeFunction*> bound;  // every entry bound, in ops.yaml order

  const NamedReturnType* return_type_of(const FunctionSchema& schema) const;
};

std::vector<std::string> return_names(const FunctionSchema& schema) {
  std::vector<std::string> names;
  for (const Return& r : schema.returns) names.push_back(r.name);
  return names;
}

// A tuple is named only when every item has a name.
bool has_named_returns(const FunctionSchema& schema) {
  return schema.returns.size() > 1 && std::none_of(schema.returns.begin(), schema.returns.end(),
                                                   [](const Return& r) { return r.name.empty(); });
}

const NamedReturnType* PythonBindings::return_type_of(const FunctionSchema& schema) const {
  if (!has_named_returns(schema)) return nullptr;
  const std::vector<std::string> fields = return_names(schema);
  for (const NamedReturnType& type : return_types) {
    if (type.op == schema.name.name && type.fields == fields) return &type;
  }
  return nullptr;
}

// `text` as a C string literal, quotes included.
std::string c_string_literal(std::string_view text) {
  std::string s = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') {
      s += '\\';
      s += c;
    } else if (c == '\n') {
      s += "\\n";
    } else {
      s += c;
    }
  }
  return s + "\"";
}

std::string_view param_type(TypeCategory category) {
  switch (category) {
    case TypeCategory::Tensor: return "Tensor";
    case TypeCategory::OptionalTensor: return "OptionalTensor";
    case TypeCategory::TensorList: return "TensorList";
    case TypeCategory::Scalar: return "Scalar";
    case TypeCategory::Int: return "Int";
    case TypeCategory::OptionalInt: return "OptionalInt";
    case TypeCategory::IntList: return "IntList";
    case TypeCategory::OptionalIntList: return "OptionalIntList";
    case TypeCategory::Bool: return "Bool";
    case TypeCategory::Float: return "Float";
    case TypeCategory::OptionalFloat: return "OptionalFloat";
    case TypeCategory::Str: return "Str";
    case TypeCategory::ScalarType: return "ScalarType";
    case TypeCategory::OptionalScalarType: return "OptionalScalarType";
    case TypeCategory::Device: return "Device";
    case TypeCategory::OptionalDevice: return "OptionalDevice";
  }
  throw std::logic_error("no ParamType for a type category");
}

// How a binding reads an argument: the local's type and the ParsedArgs reader.
struct Reader {
  std::string_view local_type;
  std::string_view method;
};

Reader reader_for(TypeCategory category) {
  switch (category) {
    case TypeCategory::Tensor: return {"Tensor", "tensor"};
    case TypeCategory::OptionalTensor: return {"std::optional<Tensor>", "optional_tensor"};
    case TypeCategory::TensorList: return {"std::vector<Tensor>", "tensor_list"};
    case TypeCategory::Scalar: return {"Scalar", "scalar"};
    case TypeCategory::Int: return {"int64_t", "to_int"};
    case TypeCategory::OptionalInt: return {"std::optional<int64_t>", "optional_int"};
    case TypeCategory::IntList: return {"DimVector", "int_list"};
    case TypeCategory::OptionalIntList: return {"std::optional<DimVector>", "optional_int_list"};
    case TypeCategory::Bool: return {"bool", "to_bool"};
    case TypeCategory::Float: return {"double", "to_double"};
    case TypeCategory::OptionalFloat: return {"std::optional<double>", "optional_double"};
    case TypeCategory::Str: return {"std::string_view", "string"};
    case TypeCategory::ScalarType: return {"DType", "scalar_type"};
    case TypeCategory::OptionalScalarType: return {"std::optional<DType>", "optional_scalar_type"};
    case TypeCategory::Device: return {"Device", "device"};
    case TypeCategory::OptionalDevice: return {"std::optional<Device>", "optional_device"};
  }
  throw std::logic_error("no ParsedArgs reader for a type category");
}

// The stub's annotation for an argument. `_dtype` and `_device` are the skeleton's names of the
// classes, which Tensor's properties `dtype` and `device` hide inside class Tensor; `_int`,
// `_float` and `_bool` those of the builtins, which the dtype objects of those names hide.
std::string stub_type(const Type& type) {
  const std::string int_list = type.list_size ? "Union[_int, Sequence[_int]]" : "Sequence[_int]";
  switch (classify(type)) {
    case TypeCategory::Tensor: return "Tensor";
    case TypeCategory::OptionalTensor: return "Optional[Tensor]";
    case TypeCategory::TensorList: return "Sequence[Tensor]";
    case TypeCategory::Scalar: return "Number";
    case TypeCategory::Int: return "_int";
    case TypeCategory::OptionalInt: return "Optional[_int]";
    case TypeCategory::IntList: return int_list;
    case TypeCategory::OptionalIntList: return "Optional[" + int_list + "]";
    case TypeCategory::Bool: return "_bool";
    case TypeCategory::Float: return "_float";
    case TypeCategory::OptionalFloat: return "Optional[_float]";
    case TypeCategory::Str: return "str";
    case TypeCategory::ScalarType: return "_dtype";
    case TypeCategory::OptionalScalarType: return "Optional[_dtype]";
    case TypeCategory::Device: return "Union[_device, str]";
    case TypeCategory::OptionalDevice: return "Optional[Union[_device, str]]";
  }
  throw std::logic_error("no stub type for a type category");
}

[[noreturn]] void fail(const NativeFunction& f, const std::string& message) {
  throw CodegenError(f.location, fmt::format("'{}': {}", f.func.name.str(), message));
}

// An integer default as a C++ expression, refusing what int64_t cannot hold.
std::string cpp_integer(const NativeFunction& f, const Argument& a, std::string_view text) {
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) {
    fail(f, fmt::format("the default of '{}' ({}) does not fit in a 64-bit integer", a.name,
                        *a.default_value));
  }
  // The literal of the smallest value would not fit before its minus sign applies.
  if (value == std::numeric_limits<int64_t>::min()) return fmt::format("({} - 1)", value + 1);
  return fmt::format("{}", value);
}

std::string cpp_floating(const NativeFunction& f, const Argument& a, const std::string& text) {
  errno = 0;
  const double value = std::strtod(text.c_str(), nullptr);
  if (errno == ERANGE || !std::isfinite(value)) {
    fail(f, fmt::format("the default of '{}' ({}) is out of the range of a double", a.name,
                        *a.default_value));
  }
  return text;
}

bool is_integer_text(std::string_view text) {
  return text.find_first_of(".eE") == std::string_view::npos;
}

// The Default:: expression of python/src/arg_parser.h for a schema default, which the schema
// parser has checked against the argument's type already.
std::string cpp_param_default(const NativeFunction& f, const Argument& a) {
  const std::string& value = *a.default_value;
  if (value == "None") return "Default::none()";
  if (a.type.is_list) {
    const auto too_long = [&](int64_t count) {
      fail(f, fmt::format("the default of '{}' ({}) has {} values; the Python argument parser "
                          "keeps at most {} (Default::list in python/src/arg_parser.h)",
                          a.name, value, count, kMaxDefaultListLength));
    };
    // Checked before the shorthand `int[N] size=1` is spelled out N times.
    const int64_t shorthand_count = a.type.list_size.value_or(1);
    if (value.front() != '[' && shorthand_count > static_cast<int64_t>(kMaxDefaultListLength)) {
      too_long(shorthand_count);
    }
    std::vector<std::string> items = default_list_items(a);
    if (items.size() > kMaxDefaultListLength) too_long(static_cast<int64_t>(items.size()));
    for (std::string& item : items) item = cpp_integer(f, a, item);
    return fmt::format("Default::int_list({{{}}})", comma_list(items));
  }
  switch (a.type.base) {
    case BaseKind::Bool: return fmt::format("Default::boolean({})", value == "True");
    case BaseKind::Str:
      return fmt::format("Default::string({})",
                         c_string_literal(std::string_view(value).substr(1, value.size() - 2)));
    case BaseKind::Int: return fmt::format("Default::integer({})", cpp_integer(f, a, value));
    case BaseKind::Float: return fmt::format("Default::floating({})", cpp_floating(f, a, value));
    case BaseKind::Scalar:
      return is_integer_text(value)
                 ? fmt::format("Default::integer({})", cpp_integer(f, a, value))
                 : fmt::format("Default::floating({})", cpp_floating(f, a, value));
    case BaseKind::Tensor:
    case BaseKind::ScalarType:
    case BaseKind::Device: break;
  }
  fail(f, fmt::format("the default of '{}' ({}) has no Python form", a.name, value));
}

// The Python parameters of entry `f`, as a module function or as a Tensor method, checked for
// what Python or the argument parser cannot take.
PythonSignature python_signature(const NativeFunction& f, bool is_method) {
  PythonSignature sig{&f, {}};
  const Argument* self = f.func.find_argument("self");
  if (is_method) sig.params.push_back({"self", self});
  for (const Argument* a : f.func.non_out_arguments()) {
    if (is_method && a == self) continue;
    const std::string name = !is_method && a == self ? "input" : a->name;
    sig.params.push_back({name, a, {}, a->kwarg_only});
  }
  const std::vector<const Argument*> outs = f.func.out_arguments();
  if (!outs.empty()) sig.params.push_back({"out", nullptr, outs, true});

  for (const PythonParam& p : sig.params) {
    if (contains(kPythonKeywords, p.name)) {
      fail(f, fmt::format("argument '{}' is a Python keyword, which Python cannot take as a "
                          "parameter name; rename it",
                          p.name));
    }
    const auto same_name = [&](const PythonParam& q) { return q.name == p.name; };
    if (std::count_if(sig.params.begin(), sig.params.end(), same_name) > 1) {
      const std::string why = p.name == "out"     ? "Python gives that name to the out= arguments"
                              : p.name == "input" ? "the function form gives that name to 'self'"
                                                  : "the schema has it twice";
      fail(f, fmt::format("two Python parameters would be named '{}': {}; rename argument '{}'",
                          p.name, why, p.name));
    }
    const std::vector<const Argument*> arguments =
        p.is_out() ? p.outs : std::vector<const Argument*>{p.argument};
    for (const Argument* a : arguments) {
      if (contains(kReservedLocals, a->name)) {
        fail(f, fmt::format("argument '{}' has the name of something the generated binding uses "
                            "itself; rename the argument",
                            a->name));
      }
    }
  }
  if (sig.params.size() > kMaxParams) {
    fail(f, fmt::format("{} Python parameters are more than the {} that the argument parser "
                        "takes (ParsedArgs::kMaxParams in python/src/arg_parser.h)",
                        sig.params.size(), kMaxParams));
  }
  const PythonParam* defaulted = nullptr;
  for (const PythonParam& p : sig.params) {
    if (p.keyword_only) break;
    if (p.argument->default_value) {
      defaulted = &p;
    } else if (defaulted) {
      fail(f, fmt::format("positional argument '{}' has no default but follows '{}', which has "
                          "one: Python cannot declare that; give '{}' a default or move it",
                          p.name, defaulted->name, p.name));
    }
  }
  return sig;
}

PythonBindings python_bindings(const NativeFunctions& functions) {
  PythonBindings b;
  b.source = source_file_name(functions.path);
  std::vector<std::string> names;  // operator names, in order of first appearance
  for (const NativeFunction& f : functions.functions) {
    if (!contains(names, f.func.name.name)) names.push_back(f.func.name.name);
  }
  std::vector<const NativeFunction*> bound;
  for (const std::string& name : names) {
    PythonCallable function{name, false, {}};
    PythonCallable method{name, true, {}};
    for (const NativeFunction& f : functions.functions) {
      if (f.func.name.name != name) continue;
      if (f.variants.function) function.signatures.push_back(python_signature(f, false));
      if (f.variants.method) method.signatures.push_back(python_signature(f, true));
    }
    for (PythonCallable* callable : {&function, &method}) {
      if (callable->signatures.empty()) continue;
      for (const PythonSignature& sig : callable->signatures) bound.push_back(sig.function);
      (callable->is_method ? b.methods : b.functions).push_back(std::move(*callable));
    }
  }
  for (const NativeFunction& f : functions.functions) {
    if (std::find(bound.begin(), bound.end(), &f) == bound.end()) continue;
    b.bound.push_back(&f);
    if (!has_named_returns(f.func) || b.return_type_of(f.func)) continue;
    const bool name_taken =
        std::any_of(b.return_types.begin(), b.return_types.end(),
                    [&](const NamedReturnType& t) { return t.name == f.func.name.name; });
    b.return_types.push_back({f.func.name.name,
                              name_taken ? f.func.name.cpp_name() : f.func.name.name,
                              return_names(f.func)});
  }
  return b;
}

// --- python_functions.cpp -----------------------------------------------------------------

// One row of a Param table (python/src/arg_parser.h), designated so that it reads on its own.
std::string param_row(const NativeFunction& f, const PythonParam& p) {
  std::string row = fmt::format("{{.name = \"{}\", .type = ParamType::", p.name);
  int64_t list_size = 0;
  if (p.is_out()) {
    row += p.outs.size() == 1 ? "OutTensor" : "OutTensorTuple";
    if (p.outs.size() > 1) list_size = static_cast<int64_t>(p.outs.size());
  } else {
    row += param_type(classify(p.argument->type));
    list_size = p.argument->type.list_size.value_or(0);
  }
  if (p.keyword_only) row += ", .keyword_only = true";
  if (!p.is_out() && p.argument->default_value) {
    row += ", .default_value = " + cpp_param_default(f, *p.argument);
  }
  if (list_size != 0) row += fmt::format(", .list_size = {}", list_size);
  return row + "},";
}

std::string params_table_name(const PythonSignature& sig) {
  return sig.function->func.name.cpp_name() + "_params";
}

// The index of the parameter that holds schema argument `a`.
size_t param_index(const PythonSignature& sig, const Argument* a) {
  for (size_t i = 0; i < sig.params.size(); ++i) {
    const PythonParam& p = sig.params[i];
    if (p.argument == a || std::find(p.outs.begin(), p.outs.end(), a) != p.outs.end()) return i;
  }
  throw std::logic_error("argument " + a->name + " has no Python parameter");
}

// What the binding returns for a single written return: the argument of its alias set.
const Argument& aliased_argument(const FunctionSchema& schema, const Return& r) {
  for (const Argument& a : schema.arguments) {
    if (a.annotation && a.annotation->alias_set == r.annotation->alias_set) return a;
  }
  throw std::logic_error("return " + r.str() + " aliases no argument");
}

// One case of a binding's switch (python_functions.cpp.overload.in): read every argument into
// a local, call the public C++ function without the GIL, convert the result.
std::string overload_case(const PythonBindings& b, const PythonSignature& sig, size_t index) {
  const NativeFunction& f = *sig.function;
  TemplateLines locals;
  for (size_t i = 0; i < sig.params.size(); ++i) {
    const PythonParam& p = sig.params[i];
    if (p.is_out()) {
      for (size_t k = 0; k < p.outs.size(); ++k) {
        locals.push_back(
            p.outs.size() == 1
                ? fmt::format("Tensor {} = parsed.tensor({});", p.outs[k]->name, i)
                : fmt::format("Tensor {} = parsed.out_tensor({}, {});", p.outs[k]->name, i, k));
      }
      continue;
    }
    // Written tensors stay mutable: the in-place functions take them as Tensor&.
    const Reader reader = reader_for(classify(p.argument->type));
    locals.push_back(fmt::format("{}{} {} = parsed.{}({});", p.argument->is_write() ? "" : "const ",
                                 reader.local_type, p.argument->name, reader.method, i));
  }

  const CppSignature cpp = function_signature(f);
  std::vector<std::string> arguments;
  for (const CppParameter& parameter : cpp.parameters) {
    const std::string& name = parameter.argument->name;
    arguments.push_back(classify(parameter.argument->type) == TypeCategory::OptionalIntList
                            ? fmt::format("{0} ? OptionalIntArrayRef({0}->ref()) : "
                                          "OptionalIntArrayRef()",
                                          name)
                            : name);
  }
  const std::string call =
      fmt::format("{}{}({})", has_detail_method_function(f) ? "bp::detail::" : "bp::", cpp.name,
                  comma_list(arguments));

  TemplateLines statements;
  const std::vector<Return>& returns = f.func.returns;
  if (returns.empty()) {
    statements = {fmt::format("without_gil([&] {{ {}; }});", call), "Py_RETURN_NONE;"};
  } else if (returns.size() == 1 && returns[0].is_write()) {
    // The caller gets back the very object it passed (x.add_(y) is x).
    const size_t returned = param_index(sig, &aliased_argument(f.func, returns[0]));
    statements = {fmt::format("without_gil([&] {{ {}; }});", call),
                  fmt::format("return parsed.returned_argument({});", returned)};
  } else if (returns.size() == 1 && returns[0].annotation) {
    // A view op may hand back its input unchanged (x.contiguous(), x.to(x.device)): then the
    // caller gets back the very object, as PyTorch's callers do.
    const size_t viewed = param_index(sig, &aliased_argument(f.func, returns[0]));
    statements = {fmt::format("return parsed.wrap_view({}, without_gil([&] {{ return {}; }}));",
                              viewed, call)};
  } else if (const NamedReturnType* type = b.return_type_of(f.func)) {
    statements = {fmt::format("return wrap(without_gil([&] {{ return {}; }}), {}());", call,
                              type->cpp_function())};
  } else {
    statements = {fmt::format("return wrap(without_gil([&] {{ return {}; }}));", call)};
  }
  return fill_template("python_functions.cpp.overload.in", {
                                                               {"index", std::to_string(index)},
                                                               {"schema", f.func.str()},
                                                               {"locals", locals},
                                                               {"statements", statements},
                                                           });
}

// One module function or Tensor method (python_functions.cpp.function.in, .method.in).
std::string binding(const PythonBindings& b, const PythonCallable& callable) {
  TemplateLines tables;
  TemplateLines signatures;
  TemplateLines cases;
  for (size_t i = 0; i < callable.signatures.size(); ++i) {
    const PythonSignature& sig = callable.signatures[i];
    const std::string schema = c_string_literal(sig.function->func.str());
    if (sig.params.empty()) {
      signatures.push_back(fmt::format("Signature{{{}, {{}}}},", schema));
    } else {
      TemplateLines rows;
      for (const PythonParam& p : sig.params) rows.push_back(param_row(*sig.function, p));
      tables.push_back(fill_template("python_functions.cpp.params.in",
                                     {{"table", params_table_name(sig)}, {"params", rows}}));
      signatures.push_back(fmt::format("Signature{{{}, {}}},", schema, params_table_name(sig)));
    }
    cases.push_back(overload_case(b, sig, i));
  }
  return fill_template(callable.is_method ? "python_functions.cpp.method.in"
                                          : "python_functions.cpp.function.in",
                       {
                           {"cpp_name", callable.cpp_name()},
                           {"name", callable.name},
                           {"param_tables", tables},
                           {"signatures", signatures},
                           {"cases", cases},
                       });
}

// The index of the one positional parameter (after a method's receiver) when it is an int
// list: the argument parser also takes its ints as separate arguments, x.view(2, 3).
std::optional<size_t> spreadable_param(const PythonCallable& callable, const PythonSignature& sig) {
  const size_t first = callable.is_method ? 1 : 0;
  size_t positional = 0;
  while (first + positional < sig.params.size() && !sig.params[first + positional].keyword_only)
    ++positional;
  if (positional != 1 || sig.params[first].is_out() ||
      classify(sig.params[first].argument->type) != TypeCategory::IntList) {
    return std::nullopt;
  }
  return first;
}

// "add(input, other, *, alpha=1) -> Tensor": a signature as Python shows it, without the
// receiver of a method. With `annotated`, as the stub writes it. `spread` names a parameter to
// write as separate ints, `*size: _int`.
std::string python_parameters(const PythonCallable& callable, const PythonSignature& sig,
                              bool annotated, std::optional<size_t> spread = std::nullopt) {
  std::vector<std::string> parts;
  bool keyword_only = false;
  for (size_t i = 0; i < sig.params.size(); ++i) {
    const PythonParam& p = sig.params[i];
    if (callable.is_method && i == 0) {
      if (annotated) parts.push_back("self");
      continue;
    }
    if (spread == i) {
      parts.push_back("*" + p.name + (annotated ? ": _int" : ""));
      keyword_only = true;
      continue;
    }
    if (p.keyword_only && !keyword_only) {
      parts.push_back("*");
      keyword_only = true;
    }
    std::string part = p.name;
    if (annotated) {
      if (p.is_out()) {
        std::vector<std::string> tensors(p.outs.size(), "Tensor");
        part += ": " + (p.outs.size() == 1 ? "Tensor" : "Tuple[" + comma_list(tensors) + "]");
      } else {
        part += ": " + stub_type(p.argument->type);
      }
    }
    if (!p.is_out() && p.argument->default_value) {
      part += (annotated ? " = " : "=") + *p.argument->default_value;
    }
    parts.push_back(part);
  }
  return comma_list(parts);
}

// The returns as a docstring shows them: "Tensor", "(Tensor values, Tensor indices)".
std::string doc_returns(const FunctionSchema& schema) {
  if (schema.returns.empty()) return "None";
  if (schema.returns.size() == 1) return "Tensor";
  std::vector<std::string> items;
  for (const Return& r : schema.returns)
    items.push_back(r.name.empty() ? "Tensor" : "Tensor " + r.name);
  return "(" + comma_list(items) + ")";
}

// A PyMethodDef row, whose docstring gives each signature as Python calls it (once: overloads
// that differ only in types read the same), then the schemas.
std::string method_def_row(const PythonCallable& callable) {
  std::vector<std::string> doc;
  for (const PythonSignature& sig : callable.signatures) {
    std::string line =
        fmt::format("{}({}) -> {}", callable.name, python_parameters(callable, sig, false),
                    doc_returns(sig.function->func));
    if (!contains(doc, line)) doc.push_back(std::move(line));
  }
  doc.emplace_back();
  for (const PythonSignature& sig : callable.signatures) doc.push_back(sig.function->func.str());
  std::string row = fmt::format("{{\"{}\", as_py_cfunction(&{}), METH_FASTCALL | METH_KEYWORDS,",
                                callable.name, callable.cpp_name());
  for (size_t i = 0; i < doc.size(); ++i) {
    const bool last = i + 1 == doc.size();
    row += "\n " + c_string_literal(last ? doc[i] : doc[i] + "\n") + (last ? "}," : "");
  }
  return row;
}

std::string python_functions_cpp(const PythonBindings& b) {
  TemplateLines return_types;
  for (const NamedReturnType& type : b.return_types) {
    std::vector<std::string> fields;
    for (const std::string& field : type.fields) fields.push_back(c_string_literal(field));
    return_types.push_back(fill_template("python_functions.cpp.return_type.in",
                                         {
                                             {"function", type.cpp_function()},
                                             {"type_name", "backplane.return_types." + type.name},
                                             {"fields", comma_list(fields)},
                                         }));
  }
  TemplateLines functions, methods, function_table, method_table, schemas;
  for (const PythonCallable& callable : b.functions) {
    functions.push_back(binding(b, callable));
    function_table.push_back(method_def_row(callable));
  }
  for (const PythonCallable& callable : b.methods) {
    methods.push_back(binding(b, callable));
    method_table.push_back(method_def_row(callable));
  }
  for (const NativeFunction* f : b.bound) schemas.push_back(c_string_literal(f->func.str()) + ",");
  return fill_template("python_functions.cpp.in", {
                                                      {"source", b.source},
                                                      {"return_types", return_types},
                                                      {"functions", functions},
                                                      {"methods", methods},
                                                      {"function_table", function_table},
                                                      {"method_table", method_table},
                                                      {"schemas", schemas},
                                                  });
}

// --- _C.pyi -------------------------------------------------------------------------------

std::string stub_returns(const PythonBindings& b, const FunctionSchema& schema) {
  if (schema.returns.empty()) return "None";
  if (schema.returns.size() == 1) return "Tensor";
  if (const NamedReturnType* type = b.return_type_of(schema)) return type->stub_class();
  std::vector<std::string> tensors(schema.returns.size(), "Tensor");
  return "Tuple[" + comma_list(tensors) + "]";
}

// The `def`s of one function or method, @overload'ed when there are several: one per signature,
// and one more for a signature whose int list may be spread.
TemplateLines stub_defs(const PythonBindings& b, const PythonCallable& callable) {
  std::vector<std::string> defs;
  for (const PythonSignature& sig : callable.signatures) {
    const std::string returns = stub_returns(b, sig.function->func);
    defs.push_back(fmt::format("def {}({}) -> {}: ...", callable.name,
                               python_parameters(callable, sig, true), returns));
    if (const std::optional<size_t> spread = spreadable_param(callable, sig)) {
      defs.push_back(fmt::format("def {}({}) -> {}: ...", callable.name,
                                 python_parameters(callable, sig, true, spread), returns));
    }
  }
  if (defs.size() > 1) {
    for (std::string& def : defs) def = "@overload\n" + def;
  }
  return defs;
}

std::string python_stubs(const PythonBindings& b) {
  TemplateLines return_types;
  for (const NamedReturnType& type : b.return_types) {
    TemplateLines fields;
    for (const std::string& field : type.fields) fields.push_back(field + ": Tensor");
    return_types.push_back(fill_template(
        "_C.pyi.return_type.in",
        {{"class_name", type.stub_class()}, {"type_name", type.name}, {"fields", fields}}));
  }
  TemplateLines methods, functions;
  for (const PythonCallable& callable : b.methods) {
    for (std::string& def : stub_defs(b, callable)) methods.push_back(std::move(def));
  }
  for (const PythonCallable& callable : b.functions) {
    for (std::string& def : stub_defs(b, callable)) functions.push_back(std::move(def));
  }
  return fill_template("_C.pyi.in", {
                                        {"source", b.source},
                                        {"return_types", return_types},
                                        {"tensor_methods", methods},
                                        {"functions", functions},
                                    });
}

}  // namespace

std::string generate_python_functions_cpp(const NativeFunctions& functions) {
  return python_functions_cpp(python_bindings(functions));
}

std::string generate_python_stubs(const NativeFunctions& functions) {
  return python_stubs(python_bindings(functions));
}

std::vector<GeneratedFile> generate_python(const NativeFunctions& functions,
                                           const std::filesystem::path& out) {
  const PythonBindings bindings = python_bindings(functions);
  return {
      {out / "python_functions.cpp", python_functions_cpp(bindings)},
      {out / "_C.pyi", python_stubs(bindings)},
  };
}

}  // namespace bp::codegen
