// Templates of generated code: placeholders inside a line take one-line strings, placeholders
// alone on their line take blocks indented to their column, and a template and its generator
// that disagree are an error naming the template and the placeholder.
#include "code_template.h"

#include <algorithm>

#include "embedded_templates.h"
#include "test_support.h"

using namespace bp::codegen;
using namespace bp::codegen::testing;

namespace {

std::string fill(std::string_view text, const TemplateValues& values) {
  return CodeTemplate("Example.h.in", text).substitute(values);
}

}  // namespace

TEST_CASE("a placeholder inside a line takes its string as it is") {
  CHECK(fill("inline void ${name}(${parameters});\n",
             {{"name", "add_out"}, {"parameters", "const Tensor& self"}}) ==
        "inline void add_out(const Tensor& self);\n");
  CHECK(fill("${a}${b} and ${a}", {{"a", "x"}, {"b", ""}}) == "x and x");
}

TEST_CASE("a '$' that does not open a placeholder is plain text") {
  CHECK(fill("cost: $5, ${x} $x {y}\n", {{"x", "1"}}) == "cost: $5, 1 $x {y}\n");
}

TEST_CASE("a list alone on its line puts each line of each item at the placeholder's column") {
  const std::string text = "{\n  ${statements}\n}\n";
  CHECK(fill(text, {{"statements", TemplateLines{"a();", "b();"}}}) == "{\n  a();\n  b();\n}\n");
  // An item may span lines; its trailing newline ends its last line; empty lines stay empty.
  CHECK(fill(text, {{"statements", TemplateLines{"if (x) {\n  y();\n}\n", "\nz();"}}}) ==
        "{\n  if (x) {\n    y();\n  }\n\n  z();\n}\n");
}

TEST_CASE("an empty list removes its line") {
  CHECK(fill("{\n  ${statements}\n}\n", {{"statements", TemplateLines{}}}) == "{\n}\n");
  CHECK(fill("a\n${rest}", {{"rest", TemplateLines{}}}) == "a\n");
}

TEST_CASE("a string alone on its line is a block of one item") {
  CHECK(fill("  ${body}\n", {{"body", "x;\ny;"}}) == "  x;\n  y;\n");
  CHECK(fill("end\n${last}", {{"last", "one\ntwo"}}) == "end\none\ntwo");
}

TEST_CASE("a placeholder the generator does not fill is an error at its position") {
  const std::string error = error_of([] {
    fill("a\n  b ${cpp_nmae};\n", {{"cpp_name", "add_out"}});
  });
  CHECK(error ==
        "Example.h.in:2:5: error: the template uses ${cpp_nmae}, which the generator does not "
        "fill; did you mean 'cpp_name'?");
}

TEST_CASE("a value the template has no placeholder for is an error naming both") {
  CHECK(error_of([] {
          fill("${name}\n", {{"name", "x"}, {"kernels", TemplateLines{}}});
        }) ==
        "Example.h.in: error: the generator fills ${kernels}, which the template does not have");
}

TEST_CASE("inside a line, a list or a string of several lines is an error") {
  CHECK(error_of([] {
          fill("int a[] = {${items}};\n", {{"items", TemplateLines{"1"}}});
        }) ==
        "Example.h.in:1:12: error: ${items} is filled with a list, which only a placeholder "
        "alone on its line takes");
  CHECK(error_of([] {
          fill("x ${body}\n", {{"body", "a;\nb;"}});
        }) ==
        "Example.h.in:1:3: error: ${body} is filled with several lines, which only a "
        "placeholder alone on its line takes");
}

TEST_CASE("a '${' that does not form ${name} is an error when the template is read") {
  for (const char* text : {"${}", "a\n  ${ name}", "${name", "${name\n}", "${a-b}", "${1st}"}) {
    CAPTURE(text);
    const std::string error = error_of([&] { CodeTemplate("Bad.h.in", text); });
    CHECK(error.find("Bad.h.in:") == 0);
    CHECK(error.find("error: '${' starts no placeholder: write ${name}") != std::string::npos);
  }
  CHECK(error_of([] { CodeTemplate("Bad.h.in", "a\n  ${ name}"); }).find("Bad.h.in:2:3:") == 0);
}

TEST_CASE("the templates of codegen/templates/ are compiled into bp-codegen") {
  const fs::path folder = tests_dir().parent_path().parent_path() / "codegen" / "templates";
  std::vector<std::string> on_disk;
  for (const auto& entry : fs::directory_iterator(folder))
    on_disk.push_back(entry.path().filename().string());
  std::sort(on_disk.begin(), on_disk.end());
  std::vector<std::string> embedded;
  for (size_t i = 0; i < kEmbeddedTemplateFileCount; ++i)
    embedded.push_back(kEmbeddedTemplateFiles[i].name);
  CHECK(embedded == on_disk);
  CHECK(embedded_template("Kernels.h.in").name() == "Kernels.h.in");
  CHECK(error_of([] { embedded_template("Kernel.h.in"); }) ==
        "Kernel.h.in: error: bp-codegen embeds no template of that name (the files of "
        "codegen/templates/); did you mean 'Kernels.h.in'?");
}
