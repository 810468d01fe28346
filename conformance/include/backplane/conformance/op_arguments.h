// The arguments of one kernel op call, boxed: what a sample generator makes and the generated
// kernel op table (kernel_op_table.h) unboxes into the typed call, in the order of the op's
// schema. A reader of the wrong type is a bug in a sample generator, reported as a bp::Error
// that names the argument's index and both types.
#pragma once

#include <backplane/backplane.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <variant>
#include <vector>

namespace bp::conformance {

// std::monostate is None, for the optional types.
using ArgumentValue = std::variant<std::monostate, Tensor, std::vector<Tensor>, Scalar, int64_t,
                                   std::vector<int64_t>, double, bool, std::string, DType>;

class OpArguments {
 public:
  OpArguments() = default;
  OpArguments(std::initializer_list<ArgumentValue> values) : values_(values) {}
  explicit OpArguments(std::vector<ArgumentValue> values) : values_(std::move(values)) {}

  size_t size() const { return values_.size(); }
  const ArgumentValue& operator[](size_t i) const { return values_.at(i); }
  ArgumentValue& operator[](size_t i) { return values_.at(i); }

  // One reader per schema type (codegen/src/gen_conformance.cpp names them).
  const Tensor& tensor(size_t i) const { return get<Tensor>(i, "Tensor"); }
  Tensor& mutable_tensor(size_t i);
  std::optional<Tensor> optional_tensor(size_t i) const { return optional<Tensor>(i, "Tensor?"); }
  const std::vector<Tensor>& tensor_list(size_t i) const {
    return get<std::vector<Tensor>>(i, "Tensor[]");
  }
  Scalar scalar(size_t i) const { return get<Scalar>(i, "Scalar"); }
  int64_t int64(size_t i) const { return get<int64_t>(i, "int"); }
  std::optional<int64_t> optional_int64(size_t i) const { return optional<int64_t>(i, "int?"); }
  IntArrayRef int64_list(size_t i) const { return get<std::vector<int64_t>>(i, "int[]"); }
  OptionalIntArrayRef optional_int64_list(size_t i) const;
  bool boolean(size_t i) const { return get<bool>(i, "bool"); }
  double float64(size_t i) const { return get<double>(i, "float"); }
  std::optional<double> optional_float64(size_t i) const { return optional<double>(i, "float?"); }
  std::string_view string(size_t i) const { return get<std::string>(i, "str"); }
  DType dtype(size_t i) const { return get<DType>(i, "ScalarType"); }
  std::optional<DType> optional_dtype(size_t i) const { return optional<DType>(i, "ScalarType?"); }

 private:
  template <typename T>
  const T& get(size_t i, std::string_view type) const {
    const T* value = i < values_.size() ? std::get_if<T>(&values_[i]) : nullptr;
    if (value == nullptr) wrong_type(i, type);
    return *value;
  }
  template <typename T>
  std::optional<T> optional(size_t i, std::string_view type) const {
    if (i < values_.size() && std::holds_alternative<std::monostate>(values_[i])) {
      return std::nullopt;
    }
    return get<T>(i, type);
  }
  [[noreturn]] void wrong_type(size_t i, std::string_view type) const;

  std::vector<ArgumentValue> values_;
};

// The type an argument holds, for messages: "Tensor", "int[]", "None".
std::string_view value_type_name(const ArgumentValue& value);

// The tensors a functional overload returns, as a list.
inline std::vector<Tensor> as_tensor_list(Tensor tensor) { return {std::move(tensor)}; }
template <typename... Tensors>
std::vector<Tensor> as_tensor_list(std::tuple<Tensors...> tensors) {
  return std::apply([](auto&&... t) { return std::vector<Tensor>{Tensor(t)...}; }, tensors);
}

}  // namespace bp::conformance
