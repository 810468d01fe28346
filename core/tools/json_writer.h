// Just enough JSON writing for bp-info --json: values are built as strings of JSON text.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace bp::tools {

// The length of the valid UTF-8 sequence at the start of `text`, or 0 when it is not one.
inline size_t utf8_sequence_length(std::string_view text) {
  const auto lead = static_cast<unsigned char>(text[0]);
  const size_t length = lead < 0x80           ? 1
                        : (lead >> 5) == 0x6  ? 2
                        : (lead >> 4) == 0xe  ? 3
                        : (lead >> 3) == 0x1e ? 4
                                              : 0;
  if (length == 0 || length > text.size()) return 0;
  for (size_t i = 1; i < length; ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xc0) != 0x80) return 0;
  }
  return length;
}

// A JSON string literal. Paths and plugin messages are bytes that need not be UTF-8: a byte
// that does not start a valid sequence becomes U+FFFD, so the output always parses.
inline std::string json_string(std::string_view text) {
  std::string out = "\"";
  while (!text.empty()) {
    const char c = text[0];
    const size_t length = utf8_sequence_length(text);
    if (length == 0) {
      out += "\\ufffd";
      text.remove_prefix(1);
      continue;
    }
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
        } else {
          out.append(text.substr(0, length));
        }
    }
    text.remove_prefix(length);
  }
  return out + "\"";
}

inline std::string json_array(const std::vector<std::string>& json_values) {
  return fmt::format("[{}]", fmt::join(json_values, ", "));
}

inline std::string json_string_array(const std::vector<std::string>& texts) {
  std::vector<std::string> values;
  for (const std::string& text : texts) values.push_back(json_string(text));
  return json_array(values);
}

// Members in the order given: {"name", json_string("cpu")}.
inline std::string json_object(
    const std::vector<std::pair<std::string_view, std::string>>& members) {
  std::vector<std::string> parts;
  for (const auto& [key, json_value] : members) {
    parts.push_back(fmt::format("{}: {}", json_string(key), json_value));
  }
  return fmt::format("{{{}}}", fmt::join(parts, ", "));
}

}  // namespace bp::tools
