#include "schema_parser.h"

#include <fmt/format.h>

#include <cctype>
#include <set>

namespace bp::codegen {

SchemaSyntaxError::SchemaSyntaxError(int column, const std::string& message)
    : std::runtime_error(fmt::format("column {}: {}", column, message)),
      column_(column),
      message_(message) {}

bool is_supported_type(const Type& type) {
  switch (type.base) {
    case BaseKind::Tensor:
      // Tensor, Tensor?, Tensor[]
      return !(type.is_list && (type.is_optional || type.list_size));
    case BaseKind::Int: return true;             // int, int?, int[], int[N], int[]?, int[N]?
    case BaseKind::Float: return !type.is_list;  // float, float?
    case BaseKind::Scalar:
    case BaseKind::Bool:
    case BaseKind::Str: return !type.is_list && !type.is_optional;
    case BaseKind::ScalarType: return !type.is_list;  // ScalarType, ScalarType?
    case BaseKind::Device: return !type.is_list && type.is_optional;
  }
  return false;
}

namespace {

constexpr std::string_view kSupportedTypes =
    "Tensor, Tensor?, Tensor[], Scalar, int, int?, int[], int[N], int[]?, int[N]?, bool, float, "
    "float?, str, ScalarType, ScalarType?, Device?";

bool is_identifier_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_identifier_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

std::optional<BaseKind> base_kind_named(std::string_view name) {
  for (BaseKind kind : {BaseKind::Tensor, BaseKind::Scalar, BaseKind::Int, BaseKind::Bool,
                        BaseKind::Float, BaseKind::Str, BaseKind::ScalarType, BaseKind::Device}) {
    if (base_kind_name(kind) == name) return kind;
  }
  return std::nullopt;
}

bool is_integer_literal(std::string_view s) {
  if (!s.empty() && s[0] == '-') s.remove_prefix(1);
  if (s.empty()) return false;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

// Decimal literals as C++ also reads them: 1, -2, 0.5, 1e-05, 1.5E+3.
bool is_number_literal(std::string_view s) {
  size_t i = 0;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
  size_t digits = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i, ++digits;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i, ++digits;
  }
  if (digits == 0) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
    size_t exponent_digits = 0;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i, ++exponent_digits;
    if (exponent_digits == 0) return false;
  }
  return i == s.size();
}

// `[]`, `[0]`, `[0, 1]`.
bool is_int_list_literal(std::string_view s) {
  if (s.size() < 2 || s.front() != '[' || s.back() != ']') return false;
  std::string_view inside = s.substr(1, s.size() - 2);
  if (inside.find_first_not_of(' ') == std::string_view::npos) return true;
  size_t start = 0;
  while (true) {
    size_t comma = inside.find(',', start);
    std::string_view item =
        inside.substr(start, comma == std::string_view::npos ? comma : comma - start);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (!is_integer_literal(item)) return false;
    if (comma == std::string_view::npos) return true;
    start = comma + 1;
  }
}

bool is_string_literal(std::string_view s) {
  return s.size() >= 2 && (s.front() == '\'' || s.front() == '"') && s.back() == s.front() &&
         s.substr(1, s.size() - 2).find(s.front()) == std::string_view::npos &&
         s.find('\\') == std::string_view::npos;
}

// Why `value` cannot be the default of a `type` argument, or "" when it can.
std::string default_problem(const Type& type, std::string_view value) {
  if (value == "None") {
    return type.is_optional
               ? ""
               : fmt::format("only an optional type ('{}?') may default to None", type.str());
  }
  if (type.is_list) {
    // A fixed-size list may default to one number that fills it, as in PyTorch.
    if (is_int_list_literal(value) || (type.list_size && is_integer_literal(value))) return "";
    return "expected a list of integers such as [] or [0, 1]";
  }
  switch (type.base) {
    case BaseKind::Tensor: return "a Tensor argument can only default to None (as 'Tensor?')";
    case BaseKind::Int: return is_integer_literal(value) ? "" : "expected an integer";
    case BaseKind::Float:
    case BaseKind::Scalar: return is_number_literal(value) ? "" : "expected a number";
    case BaseKind::Bool: return value == "True" || value == "False" ? "" : "expected True or False";
    case BaseKind::Str:
      return is_string_literal(value) ? "" : "expected a quoted string such as 'none'";
    case BaseKind::ScalarType:
      return type.is_optional ? "expected None"
                              : "a ScalarType has no default; write 'ScalarType? name=None'";
    case BaseKind::Device: return "expected None";
  }
  return "unexpected default";
}

class SchemaParser {
 public:
  explicit SchemaParser(std::string_view text) : text_(text) {}

  FunctionSchema parse() {
    FunctionSchema schema;
    skip_spaces();
    schema.name = parse_operator_name();
    skip_spaces();
    expect('(', "'(' after the operator name");
    parse_arguments(schema);
    skip_spaces();
    if (!consume("->")) fail("'->' and the return types after the argument list");
    skip_spaces();
    parse_returns(schema);
    skip_spaces();
    if (pos_ != text_.size()) fail("the end of the schema after the return types");
    return schema;
  }

 private:
  [[noreturn]] void fail_at(size_t pos, const std::string& message) const {
    throw SchemaSyntaxError(static_cast<int>(pos) + 1, message);
  }
  // "expected X, found Y" at the current position.
  [[noreturn]] void fail(std::string_view expected) const {
    fail_at(pos_, fmt::format("expected {}, found {}", expected, describe_here()));
  }
  std::string describe_here() const {
    if (pos_ >= text_.size()) return "the end of the schema";
    size_t end = pos_;
    if (is_identifier_char(text_[pos_])) {
      while (end < text_.size() && is_identifier_char(text_[end])) ++end;
    } else {
      end = pos_ + 1;
    }
    return fmt::format("'{}'", text_.substr(pos_, end - pos_));
  }

  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  void skip_spaces() {
    while (pos_ < text_.size() && text_[pos_] == ' ') ++pos_;
  }
  bool consume(std::string_view token) {
    if (text_.substr(pos_, token.size()) != token) return false;
    pos_ += token.size();
    return true;
  }
  void expect(char c, std::string_view what) {
    if (peek() != c) fail(what);
    ++pos_;
  }

  std::string parse_identifier(std::string_view what) {
    if (!is_identifier_start(peek())) fail(what);
    const size_t start = pos_;
    while (pos_ < text_.size() && is_identifier_char(text_[pos_])) ++pos_;
    return std::string(text_.substr(start, pos_ - start));
  }

  OperatorName parse_operator_name() {
    OperatorName name;
    name.name = parse_identifier("an operator name");
    if (peek() == '.') {
      ++pos_;
      name.overload_name = parse_identifier("an overload name after '.'");
    }
    return name;
  }

  // The type of an argument or return, with its alias annotation if any.
  std::pair<Type, std::optional<AliasAnnotation>> parse_type() {
    const size_t start = pos_;
    const std::string base_name = parse_identifier("a type");
    const auto base = base_kind_named(base_name);
    if (!base) {
      fail_at(start,
              fmt::format("unknown type '{}' (Backplane types: {})", base_name, kSupportedTypes));
    }
    Type type;
    type.base = *base;
    std::optional<AliasAnnotation> annotation;
    if (peek() == '(') {
      const size_t annotation_start = pos_;
      ++pos_;
      AliasAnnotation a;
      if (!std::islower(static_cast<unsigned char>(peek())))
        fail("an alias set name such as 'a' in the annotation");
      while (std::islower(static_cast<unsigned char>(peek()))) a.alias_set += text_[pos_++];
      if (peek() == '!') {
        a.is_write = true;
        ++pos_;
      }
      expect(')', "')' closing the alias annotation");
      if (type.base != BaseKind::Tensor) {
        fail_at(annotation_start, fmt::format("alias annotation '{}' on type '{}': only Tensor "
                                              "arguments can alias",
                                              a.str(), base_name));
      }
      annotation = a;
    }
    if (peek() == '[') {
      ++pos_;
      type.is_list = true;
      if (std::isdigit(static_cast<unsigned char>(peek()))) {
        int64_t size = 0;
        while (std::isdigit(static_cast<unsigned char>(peek())))
          size = size * 10 + (text_[pos_++] - '0');
        type.list_size = size;
      }
      expect(']', "']' closing the list type");
    }
    if (peek() == '?') {
      ++pos_;
      type.is_optional = true;
    }
    if (annotation && !type.is_plain_tensor()) {
      fail_at(start, fmt::format("alias annotation on '{}': only a plain Tensor can carry one",
                                 type.str()));
    }
    if (!is_supported_type(type)) {
      fail_at(start, fmt::format("type '{}' is not supported (Backplane types: {})", type.str(),
                                 kSupportedTypes));
    }
    return {type, annotation};
  }

  void parse_arguments(FunctionSchema& schema) {
    bool kwarg_only = false;
    std::set<std::string> names;
    skip_spaces();
    if (peek() == ')') {
      ++pos_;
      return;
    }
    while (true) {
      skip_spaces();
      if (peek() == '*') {
        if (kwarg_only) fail_at(pos_, "a second '*' marker; keyword-only arguments start once");
        ++pos_;
        kwarg_only = true;
      } else {
        Argument argument;
        std::tie(argument.type, argument.annotation) = parse_type();
        skip_spaces();
        const size_t name_start = pos_;
        argument.name = parse_identifier("an argument name after the type");
        if (!names.insert(argument.name).second) {
          fail_at(name_start, fmt::format("argument '{}' appears twice", argument.name));
        }
        argument.kwarg_only = kwarg_only;
        skip_spaces();
        if (peek() == '=') {
          ++pos_;
          skip_spaces();
          const size_t default_start = pos_;
          argument.default_value = parse_default_text();
          if (argument.default_value->empty()) fail("a default value after '='");
          const std::string problem = default_problem(argument.type, *argument.default_value);
          if (!problem.empty()) {
            fail_at(default_start,
                    fmt::format("bad default '{}' for '{} {}': {}", *argument.default_value,
                                argument.type.str(), argument.name, problem));
          }
        }
        schema.arguments.push_back(std::move(argument));
      }
      skip_spaces();
      if (peek() == ')') {
        ++pos_;
        break;
      }
      expect(',', "',' or ')' after an argument");
    }
  }

  // A default runs to the next ',' or ')' outside brackets and quotes.
  std::string parse_default_text() {
    const size_t start = pos_;
    int depth = 0;
    char quote = 0;
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (quote) {
        if (c == quote) quote = 0;
      } else if (c == '\'' || c == '"') {
        quote = c;
      } else if (c == '[') {
        ++depth;
      } else if (c == ']') {
        --depth;
      } else if (depth == 0 && (c == ',' || c == ')')) {
        break;
      }
      ++pos_;
    }
    if (quote) fail_at(start, "a closing quote for the string default");
    std::string value(text_.substr(start, pos_ - start));
    while (!value.empty() && value.back() == ' ') value.pop_back();
    return value;
  }

  Return parse_return() {
    Return r;
    const size_t start = pos_;
    std::tie(r.type, r.annotation) = parse_type();
    if (r.type.base != BaseKind::Tensor || !r.type.is_plain_tensor()) {
      fail_at(start, fmt::format("return type '{}' is not supported: ops return Tensor or a "
                                 "tuple of Tensors",
                                 r.type.str()));
    }
    skip_spaces();
    if (is_identifier_start(peek())) r.name = parse_identifier("a return name");
    return r;
  }

  void parse_returns(FunctionSchema& schema) {
    if (peek() != '(') {
      const size_t start = pos_;
      schema.returns.push_back(parse_return());
      if (!schema.returns.back().name.empty()) {
        fail_at(start, "a named return must be written in parentheses: '(Tensor name)'");
      }
      return;
    }
    ++pos_;
    skip_spaces();
    if (peek() == ')') {
      ++pos_;
      return;
    }
    while (true) {
      skip_spaces();
      schema.returns.push_back(parse_return());
      skip_spaces();
      if (peek() == ')') {
        ++pos_;
        break;
      }
      expect(',', "',' or ')' after a return type");
    }
  }

  std::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

FunctionSchema parse_schema(std::string_view text) { return SchemaParser(text).parse(); }

}  // namespace bp::codegen
