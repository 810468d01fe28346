#include "signatures.h"

#include <fmt/format.h>

#include "cpp_types.h"

namespace bp::codegen {

namespace {

CppParameter parameter_for(const Argument& a) {
  CppParameter p;
  p.type = public_cpp_type(a);
  p.name = a.name;
  if (a.default_value) p.default_value = cpp_default(a);
  p.argument = &a;
  return p;
}

// C++ allows defaults only on a trailing run of parameters; a default before a parameter
// without one is dropped (the out= arguments moved to the front are the usual case).
void keep_trailing_defaults(std::vector<CppParameter>& parameters) {
  bool trailing = true;
  for (auto it = parameters.rbegin(); it != parameters.rend(); ++it) {
    if (!it->default_value) trailing = false;
    if (!trailing) it->default_value.reset();
  }
}

// Schema order, except that out= arguments come first.
std::vector<CppParameter> function_parameters(const FunctionSchema& schema) {
  std::vector<CppParameter> parameters;
  for (const Argument* a : schema.out_arguments()) parameters.push_back(parameter_for(*a));
  for (const Argument* a : schema.non_out_arguments()) parameters.push_back(parameter_for(*a));
  keep_trailing_defaults(parameters);
  return parameters;
}

}  // namespace

std::string CppSignature::parameter_list(bool with_defaults) const {
  std::string s;
  for (size_t i = 0; i < parameters.size(); ++i) {
    if (i > 0) s += ", ";
    s += parameters[i].type + " " + parameters[i].name;
    if (with_defaults && parameters[i].default_value) s += " = " + *parameters[i].default_value;
  }
  return s;
}

std::string CppSignature::argument_list() const {
  std::string s;
  for (size_t i = 0; i < parameters.size(); ++i) {
    if (i > 0) s += ", ";
    s += parameters[i].name;
  }
  return s;
}

std::string public_function_name(const NativeFunction& f) {
  return f.func.is_out_fn() ? f.func.name.name + "_out" : f.func.name.name;
}

bool has_detail_method_function(const NativeFunction& f) { return f.is_method_only(); }

std::string detail_method_function_name(const NativeFunction& f) {
  return "method_" + f.func.name.cpp_name();
}

CppSignature function_signature(const NativeFunction& f) {
  CppSignature sig;
  sig.return_type = public_return_type(f.func);
  sig.name =
      has_detail_method_function(f) ? detail_method_function_name(f) : public_function_name(f);
  sig.parameters = function_parameters(f.func);
  return sig;
}

CppSignature method_signature(const NativeFunction& f) {
  CppSignature sig = function_signature(f);
  sig.name = f.func.name.name;
  const Argument* self = f.func.find_argument("self");
  std::erase_if(sig.parameters, [&](const CppParameter& p) { return p.argument == self; });
  // Re-derive defaults: dropping self cannot make a default invalid, but keep the rule in one
  // place.
  for (CppParameter& p : sig.parameters) {
    p.default_value =
        p.argument->default_value ? std::optional(cpp_default(*p.argument)) : std::nullopt;
  }
  keep_trailing_defaults(sig.parameters);
  sig.is_const = !self->is_write();
  return sig;
}

std::string method_call_arguments(const NativeFunction& f) {
  std::string s;
  const CppSignature sig = function_signature(f);
  for (size_t i = 0; i < sig.parameters.size(); ++i) {
    if (i > 0) s += ", ";
    s += sig.parameters[i].name == "self" ? "*this" : sig.parameters[i].name;
  }
  return s;
}

}  // namespace bp::codegen
