#include "json_reader.h"

#include <cctype>
#include <charconv>
#include <stdexcept>

namespace loader_test {
namespace {

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  JsonValue document() {
    JsonValue value = parse_value();
    skip_whitespace();
    if (pos_ != text_.size()) fail("text after the value");
    return value;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error("invalid JSON at offset " + std::to_string(pos_) + ": " + what);
  }

  void skip_whitespace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }

  char peek() {
    if (pos_ >= text_.size()) fail("unexpected end");
    return text_[pos_];
  }

  void expect(char c) {
    if (peek() != c) fail(std::string("expected '") + c + "'");
    ++pos_;
  }

  bool consume_literal(std::string_view literal) {
    if (text_.substr(pos_, literal.size()) != literal) return false;
    pos_ += literal.size();
    return true;
  }

  JsonValue parse_value() {
    skip_whitespace();
    const char c = peek();
    if (c == '{') return parse_object();
    if (c == '[') return parse_array();
    if (c == '"') return JsonValue(parse_string());
    if (consume_literal("true")) return JsonValue(true);
    if (consume_literal("false")) return JsonValue(false);
    if (consume_literal("null")) return JsonValue();
    return parse_number();
  }

  JsonValue parse_object() {
    expect('{');
    JsonValue::Object members;
    skip_whitespace();
    if (peek() == '}') {
      ++pos_;
      return JsonValue(std::move(members));
    }
    while (true) {
      skip_whitespace();
      std::string key = parse_string();
      skip_whitespace();
      expect(':');
      if (!members.emplace(key, parse_value()).second) fail("duplicate key '" + key + "'");
      skip_whitespace();
      if (peek() == '}') {
        ++pos_;
        return JsonValue(std::move(members));
      }
      expect(',');
    }
  }

  JsonValue parse_array() {
    expect('[');
    JsonValue::Array items;
    skip_whitespace();
    if (peek() == ']') {
      ++pos_;
      return JsonValue(std::move(items));
    }
    while (true) {
      items.push_back(parse_value());
      skip_whitespace();
      if (peek() == ']') {
        ++pos_;
        return JsonValue(std::move(items));
      }
      expect(',');
    }
  }

  unsigned hex4() {
    if (pos_ + 4 > text_.size()) fail("bad \\u escape");
    unsigned value = 0;
    const auto [end, error] =
        std::from_chars(text_.data() + pos_, text_.data() + pos_ + 4, value, 16);
    if (error != std::errc() || end != text_.data() + pos_ + 4) fail("bad \\u escape");
    pos_ += 4;
    return value;
  }

  static void append_utf8(std::string& out, unsigned code_point) {
    if (code_point < 0x80) {
      out += static_cast<char>(code_point);
    } else if (code_point < 0x800) {
      out += static_cast<char>(0xc0 | (code_point >> 6));
      out += static_cast<char>(0x80 | (code_point & 0x3f));
    } else if (code_point < 0x10000) {
      out += static_cast<char>(0xe0 | (code_point >> 12));
      out += static_cast<char>(0x80 | ((code_point >> 6) & 0x3f));
      out += static_cast<char>(0x80 | (code_point & 0x3f));
    } else {
      out += static_cast<char>(0xf0 | (code_point >> 18));
      out += static_cast<char>(0x80 | ((code_point >> 12) & 0x3f));
      out += static_cast<char>(0x80 | ((code_point >> 6) & 0x3f));
      out += static_cast<char>(0x80 | (code_point & 0x3f));
    }
  }

  std::string parse_string() {
    expect('"');
    std::string out;
    while (true) {
      const char c = peek();
      ++pos_;
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) fail("unescaped control character in a string");
      if (c != '\\') {
        out += c;
        continue;
      }
      const char escape = peek();
      ++pos_;
      switch (escape) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          unsigned code_point = hex4();
          if (code_point >= 0xd800 && code_point < 0xdc00) {
            if (!consume_literal("\\u")) fail("lone high surrogate");
            const unsigned low = hex4();
            if (low < 0xdc00 || low >= 0xe000) fail("bad low surrogate");
            code_point = 0x10000 + ((code_point - 0xd800) << 10) + (low - 0xdc00);
          }
          append_utf8(out, code_point);
          break;
        }
        default: fail(std::string("bad escape \\") + escape);
      }
    }
  }

  JsonValue parse_number() {
    const size_t start = pos_;
    const auto digits = [&] {
      const size_t from = pos_;
      while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) ++pos_;
      return pos_ - from;
    };
    if (pos_ < text_.size() && text_[pos_] == '-') ++pos_;
    if (pos_ < text_.size() && text_[pos_] == '0') {
      ++pos_;
    } else if (digits() == 0) {
      fail("expected a value");
    }
    if (pos_ < text_.size() && text_[pos_] == '.') {
      ++pos_;
      if (digits() == 0) fail("expected digits after '.'");
    }
    if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      ++pos_;
      if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) ++pos_;
      if (digits() == 0) fail("expected digits in the exponent");
    }
    return JsonValue(std::stod(std::string(text_.substr(start, pos_ - start))));
  }

  std::string_view text_;
  size_t pos_ = 0;
};

template <typename T, typename Variant>
const T& get(const Variant& value, const char* kind) {
  if (!std::holds_alternative<T>(value)) throw std::runtime_error(std::string("not ") + kind);
  return std::get<T>(value);
}

}  // namespace

const std::string& JsonValue::string() const { return get<std::string>(value_, "a string"); }
double JsonValue::number() const { return get<double>(value_, "a number"); }
bool JsonValue::boolean() const { return get<bool>(value_, "true or false"); }
const JsonValue::Array& JsonValue::array() const {
  return *get<std::shared_ptr<Array>>(value_, "an array");
}
const JsonValue::Object& JsonValue::object() const {
  return *get<std::shared_ptr<Object>>(value_, "an object");
}

const JsonValue& JsonValue::operator[](const std::string& key) const {
  const Object& members = object();
  const auto it = members.find(key);
  if (it == members.end()) throw std::runtime_error("no key '" + key + "'");
  return it->second;
}

JsonValue parse_json(std::string_view text) { return Parser(text).document(); }

}  // namespace loader_test
