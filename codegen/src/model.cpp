#include "model.h"

#include <backplane/abi.h>
#include <fmt/format.h>

#include <cctype>

namespace bp::codegen {

std::string_view base_kind_name(BaseKind kind) {
  switch (kind) {
    case BaseKind::Tensor: return "Tensor";
    case BaseKind::Scalar: return "Scalar";
    case BaseKind::Int: return "int";
    case BaseKind::Bool: return "bool";
    case BaseKind::Float: return "float";
    case BaseKind::Str: return "str";
    case BaseKind::ScalarType: return "ScalarType";
    case BaseKind::Device: return "Device";
  }
  return "?";
}

std::string_view dtype_class_name(DTypeClass dtypes) {
  switch (dtypes) {
    case DTypeClass::All: return "all";
    case DTypeClass::AllButBool: return "all_but_bool";
    case DTypeClass::Floating: return "floating";
  }
  return "?";
}

namespace {

// The spelling of a type with an alias annotation right after the base name, as schemas write
// it: "Tensor(a!)", "int[1]?".
std::string type_spelling(const Type& type, const std::optional<AliasAnnotation>& annotation) {
  std::string s(base_kind_name(type.base));
  if (annotation) s += annotation->str();
  if (type.is_list) s += type.list_size ? fmt::format("[{}]", *type.list_size) : "[]";
  if (type.is_optional) s += '?';
  return s;
}

}  // namespace

std::string Type::str() const { return type_spelling(*this, std::nullopt); }

std::string AliasAnnotation::str() const {
  return fmt::format("({}{})", alias_set, is_write ? "!" : "");
}

std::string Argument::str() const {
  std::string s = type_spelling(type, annotation) + " " + name;
  if (default_value) s += "=" + *default_value;
  return s;
}

std::string Return::str() const {
  std::string s = type_spelling(type, annotation);
  if (!name.empty()) s += " " + name;
  return s;
}

std::string OperatorName::str() const {
  return overload_name.empty() ? name : name + "." + overload_name;
}

std::string OperatorName::cpp_name() const {
  return overload_name.empty() ? name : name + "_" + overload_name;
}

std::string FunctionSchema::str() const {
  std::string s = name.str() + "(";
  bool seen_kwarg_only = false;
  for (size_t i = 0; i < arguments.size(); ++i) {
    if (i > 0) s += ", ";
    if (arguments[i].kwarg_only && !seen_kwarg_only) {
      s += "*, ";
      seen_kwarg_only = true;
    }
    s += arguments[i].str();
  }
  s += ") -> ";
  // A single unnamed return stands alone; anything else is parenthesised.
  if (returns.size() == 1 && returns[0].name.empty()) {
    s += returns[0].str();
  } else {
    s += "(";
    for (size_t i = 0; i < returns.size(); ++i) {
      if (i > 0) s += ", ";
      s += returns[i].str();
    }
    s += ")";
  }
  return s;
}

uint64_t FunctionSchema::hash() const { return bp_schema_hash(str().c_str()); }

std::vector<const Argument*> FunctionSchema::out_arguments() const {
  std::vector<const Argument*> result;
  for (const Argument& a : arguments) {
    if (a.is_out()) result.push_back(&a);
  }
  return result;
}

std::vector<const Argument*> FunctionSchema::non_out_arguments() const {
  std::vector<const Argument*> result;
  for (const Argument& a : arguments) {
    if (!a.is_out()) result.push_back(&a);
  }
  return result;
}

const Argument* FunctionSchema::find_argument(std::string_view arg_name) const {
  for (const Argument& a : arguments) {
    if (a.name == arg_name) return &a;
  }
  return nullptr;
}

const NativeFunction* NativeFunctions::find(const OperatorName& name) const {
  for (const NativeFunction& f : functions) {
    if (f.func.name == name) return &f;
  }
  return nullptr;
}

const NativeFunction* NativeFunctions::find(std::string_view qualified_name) const {
  for (const NativeFunction& f : functions) {
    if (f.func.name.str() == qualified_name) return &f;
  }
  return nullptr;
}

std::vector<const NativeFunction*> NativeFunctions::kernel_ops() const {
  std::vector<const NativeFunction*> result;
  for (const NativeFunction& f : functions) {
    if (f.structured) result.push_back(&f);
  }
  return result;
}

std::string BackendConfig::lower_case_name() const {
  std::string s = backend;
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace bp::codegen
