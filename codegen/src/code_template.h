// The skeleton of a generated file, or of one repeated part of it, with `${name}` placeholders
// that a generator fills (see docs/generated-code.md, "How bp-codegen is organised"). The
// template holds the layout; the generator computes only the strings and lists that fill it.
//
// A placeholder inside a line takes a string of one line, inserted as it is. A placeholder that
// stands alone on its line (only spaces before it) takes a list of items or a string, a block of
// lines: each line of each item is indented to the placeholder's column (an empty line stays
// empty), one trailing newline of an item is dropped, and an empty list removes the line.
// A `$` not followed by `{` is plain text.
//
// The template and its generator must agree exactly: a placeholder without a value, a value
// without a placeholder, a list inside a line and a malformed `${` are all CodegenErrors that
// name the template, line and column. They are bugs in bp-codegen, which the golden tests catch.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace bp::codegen {

using TemplateLines = std::vector<std::string>;
using TemplateValue = std::variant<std::string, TemplateLines>;
using TemplateValues = std::map<std::string, TemplateValue, std::less<>>;

class CodeTemplate {
 public:
  // `name` is the template's file name, for messages. Throws for a malformed placeholder.
  CodeTemplate(std::string name, std::string_view text);

  const std::string& name() const { return name_; }
  std::string substitute(const TemplateValues& values) const;

 private:
  struct Segment {
    std::string text;  // the literal text, or the placeholder's name
    bool placeholder = false;
    bool block = false;       // a placeholder alone on its line
    std::string indentation;  // a block's: the spaces before it
    bool ends_line = false;   // a block's: a newline follows it (it does not end the template)
    int line = 0;             // a placeholder's position, for messages
    int column = 0;
  };

  std::string name_;
  std::vector<Segment> segments_;
};

}  // namespace bp::codegen
