// The C++ signatures of the public API: free functions in namespace bp, their out-of-line
// bp::detail::method_<cpp name> forms for method-only overloads, and Tensor methods.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model.h"

namespace bp::codegen {

struct CppParameter {
  std::string type;
  std::string name;
  std::optional<std::string> default_value;  // C++ spelling; only on a trailing run
  const Argument* argument = nullptr;
};

struct CppSignature {
  std::string return_type;
  std::string name;  // unqualified: "add", "add_out", "method_add__Tensor"
  std::vector<CppParameter> parameters;
  bool is_const = false;  // methods only: a method that does not write self

  std::string parameter_list(bool with_defaults) const;  // "const Tensor& self, ..."
  std::string argument_list() const;                     // "self, other, alpha"
};

// The name of the free function: the operator name, with `_out` for out= overloads, whose
// outputs come first (bp::add_out(out, self, other)), as in PyTorch's C++ API.
std::string public_function_name(const NativeFunction& f);

// Method-only overloads have no public free function; Tensor's method calls this one,
// defined out of line in bp::detail.
bool has_detail_method_function(const NativeFunction& f);
std::string detail_method_function_name(const NativeFunction& f);  // "method_add__Tensor"

// The free function (public, or the detail one for method-only overloads).
CppSignature function_signature(const NativeFunction& f);
// The Tensor method: the function's parameters without the receiver `self`.
CppSignature method_signature(const NativeFunction& f);

// The expression a Tensor method passes for each parameter of function_signature(f).
std::string method_call_arguments(const NativeFunction& f);

}  // namespace bp::codegen
