// A strict JSON parser for checking bp-info --json: anything that is not valid JSON (RFC 8259)
// is a std::runtime_error saying where.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace loader_test {

class JsonValue {
 public:
  using Array = std::vector<JsonValue>;
  using Object = std::map<std::string, JsonValue>;

  JsonValue() = default;  // null
  explicit JsonValue(bool value) : value_(value) {}
  explicit JsonValue(double value) : value_(value) {}
  explicit JsonValue(std::string value) : value_(std::move(value)) {}
  explicit JsonValue(Array value) : value_(std::make_shared<Array>(std::move(value))) {}
  explicit JsonValue(Object value) : value_(std::make_shared<Object>(std::move(value))) {}

  bool is_string() const { return std::holds_alternative<std::string>(value_); }
  bool is_array() const { return std::holds_alternative<std::shared_ptr<Array>>(value_); }
  bool is_object() const { return std::holds_alternative<std::shared_ptr<Object>>(value_); }

  // Each throws std::runtime_error when the value is of another kind or the key is missing.
  const std::string& string() const;
  double number() const;
  bool boolean() const;
  const Array& array() const;
  const Object& object() const;
  const JsonValue& operator[](const std::string& key) const;

 private:
  std::variant<std::monostate, bool, double, std::string, std::shared_ptr<Array>,
               std::shared_ptr<Object>>
      value_;
};

JsonValue parse_json(std::string_view text);

}  // namespace loader_test
