#include <backplane/conformance/op_arguments.h>

#include <fmt/format.h>

namespace bp::conformance {

Tensor& OpArguments::mutable_tensor(size_t i) {
  Tensor* value = i < values_.size() ? std::get_if<Tensor>(&values_[i]) : nullptr;
  if (value == nullptr) wrong_type(i, "Tensor");
  return *value;
}

OptionalIntArrayRef OpArguments::optional_int64_list(size_t i) const {
  if (i < values_.size() && std::holds_alternative<std::monostate>(values_[i])) {
    return std::nullopt;
  }
  return IntArrayRef(get<std::vector<int64_t>>(i, "int[]?"));
}

void OpArguments::wrong_type(size_t i, std::string_view type) const {
  if (i >= values_.size()) {
    throw Error(ErrorCode::Internal,
                fmt::format("sample input has {} arguments; the op reads argument {} ({}): the "
                            "op's sample generator must give every argument of its schema",
                            values_.size(), i, type));
  }
  throw Error(ErrorCode::Internal,
              fmt::format("sample input argument {} is {} where the schema has {}: fix the op's "
                          "sample generator",
                          i, value_type_name(values_[i]), type));
}

std::string_view value_type_name(const ArgumentValue& value) {
  constexpr std::string_view kNames[] = {"None",  "Tensor", "Tensor[]", "Scalar", "int",
                                         "int[]", "float",  "bool",     "str",    "ScalarType"};
  return kNames[value.index()];
}

}  // namespace bp::conformance
