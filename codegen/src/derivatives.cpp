#include "derivatives.h"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace bp::codegen {

namespace {

bool is_identifier_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_identifier_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

}  // namespace

const DerivativeEntry* Derivatives::find(const NativeFunction& function) const {
  for (const DerivativeEntry& entry : entries) {
    if (entry.function == &function) return &entry;
  }
  return nullptr;
}

std::vector<std::string> formula_identifiers(std::string_view expression) {
  std::vector<std::string> names;
  bool after_member_access = false;  // the previous token was `.`, `->` or `::`
  size_t i = 0;
  while (i < expression.size()) {
    const char c = expression[i];
    if (c == '"' || c == '\'') {
      // A literal: up to the same unescaped quote.
      size_t end = i + 1;
      while (end < expression.size() && expression[end] != c) {
        end += expression[end] == '\\' ? 2 : 1;
      }
      i = end + 1;
      after_member_access = false;
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      // 1e-5, 0.5f, 0x1p3: digits, letters and dots, and a sign right after an exponent.
      ++i;
      while (i < expression.size() && (is_identifier_char(expression[i]) || expression[i] == '.' ||
                                       ((expression[i] == '-' || expression[i] == '+') &&
                                        (expression[i - 1] == 'e' || expression[i - 1] == 'E')))) {
        ++i;
      }
      after_member_access = false;
    } else if (is_identifier_start(c)) {
      const size_t start = i;
      while (i < expression.size() && is_identifier_char(expression[i])) ++i;
      std::string name(expression.substr(start, i - start));
      if (!after_member_access && std::find(names.begin(), names.end(), name) == names.end()) {
        names.push_back(std::move(name));
      }
      after_member_access = false;
    } else if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else {
      const std::string_view rest = expression.substr(i);
      after_member_access = c == '.' || rest.starts_with("->") || rest.starts_with("::");
      i += rest.starts_with("->") || rest.starts_with("::") ? 2 : 1;
    }
  }
  return names;
}

int output_index(const FunctionSchema& schema, std::string_view name) {
  const int count = static_cast<int>(schema.returns.size());
  for (int i = 0; i < count; ++i) {
    if (!schema.returns[i].name.empty() && schema.returns[i].name == name) return i;
  }
  if (count == 1 && name == "result") return 0;
  if (count > 1 && name.starts_with("result") && name.size() > 6) {
    int index = -1;
    const auto [end, error] = std::from_chars(name.data() + 6, name.data() + name.size(), index);
    if (error == std::errc() && end == name.data() + name.size() && index < count &&
        std::to_string(index) == name.substr(6)) {
      return index;
    }
  }
  return -1;
}

bool is_differentiable_argument(const Argument& argument) {
  return argument.type.is_tensor_like() && !argument.is_write();
}

}  // namespace bp::codegen
