#include "cpp_types.h"

#include <fmt/format.h>

#include <stdexcept>

namespace bp::codegen {

namespace {

struct TypeRow {
  TypeCategory category;
  const char* public_type;
  const char* meta_type;
  const char* abi_type;     // nullptr: not allowed in kernels
  const char* plugin_type;  // nullptr: not allowed in kernels
};

// Read tensors. Written ones: public `Tensor&`, ABI `DLTensor*` (see public_cpp_type, abi_c_type).
constexpr TypeRow kTypeTable[] = {
    {TypeCategory::Tensor, "const Tensor&", "Tensor&", "const DLTensor*",
     "const bp::plugin::TensorView&"},
    {TypeCategory::OptionalTensor, "const std::optional<Tensor>&", "std::optional<Tensor>&",
     "const DLTensor*", "const bp::plugin::TensorView*"},
    {TypeCategory::TensorList, "const std::vector<Tensor>&", "std::vector<Tensor>&",
     "bp_tensor_list", "std::span<const bp::plugin::TensorView>"},
    {TypeCategory::Scalar, "const Scalar&", "const Scalar&", "bp_scalar", "const bp::Scalar&"},
    {TypeCategory::Int, "int64_t", "int64_t", "int64_t", "int64_t"},
    {TypeCategory::OptionalInt, "std::optional<int64_t>", "std::optional<int64_t>",
     "bp_optional_int", "std::optional<int64_t>"},
    {TypeCategory::IntList, "IntArrayRef", "IntArrayRef", "bp_int_list",
     "std::span<const int64_t>"},
    {TypeCategory::OptionalIntList, "OptionalIntArrayRef", "OptionalIntArrayRef", "bp_int_list",
     "std::optional<std::span<const int64_t>>"},
    {TypeCategory::Bool, "bool", "bool", "uint8_t", "bool"},
    {TypeCategory::Float, "double", "double", "double", "double"},
    {TypeCategory::OptionalFloat, "std::optional<double>", "std::optional<double>",
     "bp_optional_float", "std::optional<double>"},
    {TypeCategory::Str, "std::string_view", "std::string_view", "const char*", "std::string_view"},
    {TypeCategory::ScalarType, "DType", "DType", "int32_t", "bp::DType"},
    {TypeCategory::OptionalScalarType, "std::optional<DType>", "std::optional<DType>", "int32_t",
     "std::optional<bp::DType>"},
    {TypeCategory::Device, "Device", "Device", nullptr, nullptr},
    {TypeCategory::OptionalDevice, "std::optional<Device>", "std::optional<Device>", nullptr,
     nullptr},
};

const TypeRow& row_for(const Type& type) {
  const TypeCategory category = classify(type);
  for (const TypeRow& row : kTypeTable) {
    if (row.category == category) return row;
  }
  throw std::logic_error("type table has no row for " + type.str());
}

bool is_written_tensor(const Argument& argument) {
  return argument.is_write() && classify(argument.type) == TypeCategory::Tensor;
}

}  // namespace

TypeCategory classify(const Type& type) {
  switch (type.base) {
    case BaseKind::Tensor:
      if (type.is_list) return TypeCategory::TensorList;
      return type.is_optional ? TypeCategory::OptionalTensor : TypeCategory::Tensor;
    case BaseKind::Int:
      if (type.is_list)
        return type.is_optional ? TypeCategory::OptionalIntList : TypeCategory::IntList;
      return type.is_optional ? TypeCategory::OptionalInt : TypeCategory::Int;
    case BaseKind::Scalar: return TypeCategory::Scalar;
    case BaseKind::Bool: return TypeCategory::Bool;
    case BaseKind::Float:
      return type.is_optional ? TypeCategory::OptionalFloat : TypeCategory::Float;
    case BaseKind::Str: return TypeCategory::Str;
    case BaseKind::ScalarType:
      return type.is_optional ? TypeCategory::OptionalScalarType : TypeCategory::ScalarType;
    case BaseKind::Device:
      return type.is_optional ? TypeCategory::OptionalDevice : TypeCategory::Device;
  }
  throw std::logic_error("unclassified type " + type.str());
}

bool is_tensor_category(TypeCategory category) {
  return category == TypeCategory::Tensor || category == TypeCategory::OptionalTensor ||
         category == TypeCategory::TensorList;
}

std::string public_cpp_type(const Argument& argument) {
  if (is_written_tensor(argument)) return "Tensor&";
  return row_for(argument.type).public_type;
}

std::string meta_cpp_type(const Argument& argument) { return row_for(argument.type).meta_type; }

std::string kernel_wrapper_cpp_type(const Argument& argument) {
  // The wrapper only hands tensors on, so written ones are const Tensor& like the rest.
  return row_for(argument.type).public_type;
}

std::string abi_c_type(const Argument& argument) {
  if (is_written_tensor(argument)) return "DLTensor*";
  const char* type = row_for(argument.type).abi_type;
  if (!type) throw std::logic_error(argument.type.str() + " has no kernel ABI type");
  return type;
}

std::string plugin_cpp_type(const Argument& argument) {
  const char* type = row_for(argument.type).plugin_type;
  if (!type) throw std::logic_error(argument.type.str() + " has no plugin type");
  return type;
}

std::string tensor_local_type(const Argument& argument) {
  switch (classify(argument.type)) {
    case TypeCategory::Tensor: return "Tensor";
    case TypeCategory::OptionalTensor: return "std::optional<Tensor>";
    case TypeCategory::TensorList: return "std::vector<Tensor>";
    default: throw std::logic_error(argument.type.str() + " is not a tensor type");
  }
}

std::vector<std::string> default_list_items(const Argument& argument) {
  const std::string& value = argument.default_value.value();
  if (value.front() != '[') {
    return std::vector<std::string>(static_cast<size_t>(argument.type.list_size.value_or(1)),
                                    value);
  }
  std::vector<std::string> items;
  const std::string_view inside = std::string_view(value).substr(1, value.size() - 2);
  if (inside.find_first_not_of(' ') == std::string_view::npos) return items;
  for (size_t start = 0; start <= inside.size();) {
    const size_t comma = std::min(inside.find(',', start), inside.size());
    std::string_view item = inside.substr(start, comma - start);
    item.remove_prefix(std::min(item.find_first_not_of(' '), item.size()));
    item.remove_suffix(item.size() - (item.find_last_not_of(' ') + 1));
    items.emplace_back(item);
    start = comma + 1;
  }
  return items;
}

std::string cpp_default(const Argument& argument) {
  const std::string& value = argument.default_value.value();
  if (value == "None") return "std::nullopt";
  if (value == "True") return "true";
  if (value == "False") return "false";
  if (argument.type.is_list) return "{" + comma_list(default_list_items(argument)) + "}";
  if (argument.type.base == BaseKind::Str) {
    return "\"" + value.substr(1, value.size() - 2) + "\"";
  }
  return value;
}

std::string public_return_type(const FunctionSchema& schema) {
  auto one = [](const Return& r) { return r.is_write() ? "Tensor&" : "Tensor"; };
  if (schema.returns.empty()) return "void";
  if (schema.returns.size() == 1) return one(schema.returns[0]);
  std::string s = "std::tuple<";
  for (size_t i = 0; i < schema.returns.size(); ++i) {
    if (i > 0) s += ", ";
    s += one(schema.returns[i]);
  }
  return s + ">";
}

bool has_abi_type(const Type& type) { return row_for(type).abi_type != nullptr; }

std::string comma_list(const std::vector<std::string>& items) {
  return fmt::format("{}", fmt::join(items, ", "));
}

}  // namespace bp::codegen
