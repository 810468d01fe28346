#include "code_template.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "diagnostics.h"
#include "spelling.h"

namespace bp::codegen {

namespace {

bool is_placeholder_name(std::string_view name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

// An item's lines: one trailing newline ends its last line rather than starting an empty one.
std::vector<std::string_view> lines_of(std::string_view item) {
  if (!item.empty() && item.back() == '\n') item.remove_suffix(1);
  std::vector<std::string_view> lines;
  size_t start = 0;
  for (size_t newline; (newline = item.find('\n', start)) != std::string_view::npos;) {
    lines.push_back(item.substr(start, newline - start));
    start = newline + 1;
  }
  lines.push_back(item.substr(start));
  return lines;
}

}  // namespace

CodeTemplate::CodeTemplate(std::string name, std::string_view text) : name_(std::move(name)) {
  size_t literal_start = 0;
  size_t line_start = 0;  // of the line being scanned
  int line = 1;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
      continue;
    }
    if (text.compare(i, 2, "${") != 0) continue;
    const SourceLocation location{name_, line, static_cast<int>(i - line_start) + 1};
    const size_t close = text.find_first_of("}\n", i + 2);
    if (close == std::string_view::npos || text[close] != '}' ||
        !is_placeholder_name(text.substr(i + 2, close - i - 2))) {
      throw CodegenError(location,
                         "'${' starts no placeholder: write ${name}, with a name of letters, "
                         "digits and '_'");
    }
    Segment placeholder;
    placeholder.text = std::string(text.substr(i + 2, close - i - 2));
    placeholder.placeholder = true;
    placeholder.line = location.line;
    placeholder.column = location.column;
    const std::string_view before = text.substr(line_start, i - line_start);
    const bool alone = before.find_first_not_of(' ') == std::string_view::npos &&
                       (close + 1 == text.size() || text[close + 1] == '\n');
    size_t literal_end = i;
    size_t next = close + 1;
    if (alone) {
      placeholder.block = true;
      placeholder.indentation = std::string(before);
      placeholder.ends_line = close + 1 < text.size();
      literal_end = line_start;
      if (placeholder.ends_line) {
        next = close + 2;
        ++line;
        line_start = next;
      }
    }
    if (literal_end > literal_start) {
      segments_.push_back({std::string(text.substr(literal_start, literal_end - literal_start))});
    }
    segments_.push_back(std::move(placeholder));
    literal_start = next;
    i = next - 1;
  }
  if (literal_start < text.size()) segments_.push_back({std::string(text.substr(literal_start))});
}

std::string CodeTemplate::substitute(const TemplateValues& values) const {
  std::string out;
  for (const Segment& segment : segments_) {
    if (!segment.placeholder) {
      out += segment.text;
      continue;
    }
    const SourceLocation location{name_, segment.line, segment.column};
    const auto found = values.find(segment.text);
    if (found == values.end()) {
      std::vector<std::string> filled;
      for (const auto& [name, value] : values) filled.push_back(name);
      throw CodegenError(location,
                         fmt::format("the template uses ${{{}}}, which the generator does not "
                                     "fill{}",
                                     segment.text, did_you_mean(segment.text, filled)));
    }
    const std::string* text = std::get_if<std::string>(&found->second);
    if (!segment.block) {
      if (text == nullptr) {
        throw CodegenError(location, fmt::format("${{{}}} is filled with a list, which only a "
                                                 "placeholder alone on its line takes",
                                                 segment.text));
      }
      if (text->find('\n') != std::string::npos) {
        throw CodegenError(location, fmt::format("${{{}}} is filled with several lines, which "
                                                 "only a placeholder alone on its line takes",
                                                 segment.text));
      }
      out += *text;
      continue;
    }
    const TemplateLines items =
        text != nullptr ? TemplateLines{*text} : std::get<TemplateLines>(found->second);
    std::string block;
    for (const std::string& item : items) {
      for (std::string_view item_line : lines_of(item)) {
        if (!item_line.empty()) block += segment.indentation;
        block += item_line;
        block += '\n';
      }
    }
    if (!segment.ends_line && !block.empty()) block.pop_back();
    out += block;
  }

  std::vector<std::string> used;
  for (const Segment& segment : segments_) {
    if (segment.placeholder) used.push_back(segment.text);
  }
  for (const auto& [name, value] : values) {
    if (std::find(used.begin(), used.end(), name) == used.end()) {
      throw CodegenError({name_},
                         fmt::format("the generator fills ${{{}}}, which the template does not "
                                     "have{}",
                                     name, did_you_mean(name, used)));
    }
  }
  return out;
}

}  // namespace bp::codegen
