#include "yaml_util.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>

#include "spelling.h"

namespace bp::codegen {

SourceLocation location_of(const std::string& path, const YAML::Mark& mark) {
  if (mark.is_null()) return {path, 0, 0};
  return {path, mark.line + 1, mark.column + 1};
}

SourceLocation location_of(const std::string& path, const YAML::Node& node) {
  return location_of(path, node.Mark());
}

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw CodegenError({path, 0, 0}, "cannot open the file for reading");
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

namespace {

// The first line that indents with a tab, 1-based, or 0. YAML forbids tabs in indentation, and
// the parser's own message ("illegal block entry", say) does not say that was the trouble.
size_t first_tab_indented_line(const std::string& text) {
  size_t line = 1;
  bool in_indentation = true;
  for (const char c : text) {
    if (c == '\n') {
      ++line;
      in_indentation = true;
    } else if (in_indentation && c == '\t') {
      return line;
    } else if (c != ' ') {
      in_indentation = false;
    }
  }
  return 0;
}

}  // namespace

YAML::Node load_yaml(const std::string& text, const std::string& path) {
  try {
    return YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    const size_t tab_line = first_tab_indented_line(text);
    throw CodegenError(location_of(path, e.mark),
                       tab_line == 0
                           ? fmt::format("malformed YAML: {}", e.msg)
                           : fmt::format("malformed YAML: {} (line {} indents with a tab; YAML "
                                         "indents with spaces only)",
                                         e.msg, tab_line));
  }
}

void check_keys(const YAML::Node& map, const std::vector<std::string>& known,
                const std::string& path) {
  std::map<std::string, int> first_line;
  for (const auto& key_value : map) {
    const std::string key = scalar_text(key_value.first, path, "a key");
    const SourceLocation location = location_of(path, key_value.first);
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      std::string list;
      for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
      throw CodegenError(location, fmt::format("unknown key '{}' (known keys: {}){}", key, list,
                                               did_you_mean(key, known)));
    }
    auto [it, inserted] = first_line.emplace(key, location.line);
    if (!inserted) {
      throw CodegenError(location,
                         fmt::format("duplicate key '{}' (first at line {})", key, it->second));
    }
  }
}

std::string scalar_text(const YAML::Node& node, const std::string& path, const std::string& what) {
  if (!node.IsScalar()) {
    throw CodegenError(location_of(path, node), fmt::format("{} must be a single value", what));
  }
  return node.Scalar();
}

bool scalar_bool(const YAML::Node& node, const std::string& path, const std::string& what) {
  const std::string text = scalar_text(node, path, what);
  if (text == "true" || text == "True") return true;
  if (text == "false" || text == "False") return false;
  throw CodegenError(location_of(path, node),
                     fmt::format("{} must be true or false, not '{}'", what, text));
}

}  // namespace bp::codegen
