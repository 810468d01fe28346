// The one table that maps schema types to C++ types, for every place generated code spells
// them: the public API, meta functions, core kernel wrappers, the kernel C ABI, and the C++
// functions a plugin author implements. docs/generated-code.md shows the same table.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model.h"

namespace bp::codegen {

// The distinct rows of the table: every supported schema type is exactly one of these.
enum class TypeCategory {
  Tensor,
  OptionalTensor,
  TensorList,
  Scalar,
  Int,
  OptionalInt,
  IntList,
  OptionalIntList,
  Bool,
  Float,
  OptionalFloat,
  Str,
  ScalarType,
  OptionalScalarType,
  Device,
  OptionalDevice,
};

TypeCategory classify(const Type& type);

// A Tensor, Tensor? or Tensor[]: what the meta step may replace, so generated code copies it.
bool is_tensor_category(TypeCategory category);

// Spellings of an argument's type. Written tensors (`Tensor(a!)`) differ from read ones in
// the public API and the ABI only.
std::string public_cpp_type(const Argument& argument);          // in namespace bp
std::string meta_cpp_type(const Argument& argument);            // in namespace bp
std::string kernel_wrapper_cpp_type(const Argument& argument);  // bp::detail::kernels
std::string abi_c_type(const Argument& argument);               // the kernel's C signature
std::string plugin_cpp_type(const Argument& argument);          // outside namespace bp

// The value type a Tensor-like argument is copied into before the meta step ("Tensor",
// "std::optional<Tensor>", "std::vector<Tensor>").
std::string tensor_local_type(const Argument& argument);

// The items of a list argument's default as written: "[1, 2]" gives {"1", "2"}, and PyTorch's
// shorthand `int[2] stride=1` gives {"1", "1"}.
std::vector<std::string> default_list_items(const Argument& argument);

// The C++ spelling of a schema default ("False" -> "false", "None" -> "std::nullopt").
std::string cpp_default(const Argument& argument);

// `Tensor`, `Tensor&`, `std::tuple<...>` or `void` for the schema's returns.
std::string public_return_type(const FunctionSchema& schema);

// Whether a kernel can take this type across the C ABI (Device? cannot).
bool has_abi_type(const Type& type);

// "a, b, c": the parameter and argument lists of generated code.
std::string comma_list(const std::vector<std::string>& items);

}  // namespace bp::codegen
