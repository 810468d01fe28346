#include "embedded_templates.h"

#include <fmt/format.h>

#include <map>
#include <vector>

#include "diagnostics.h"
#include "spelling.h"

namespace bp::codegen {

namespace {

using TemplateMap = std::map<std::string, CodeTemplate, std::less<>>;

TemplateMap parse_embedded_templates() {
  TemplateMap templates;
  for (size_t i = 0; i < kEmbeddedTemplateFileCount; ++i) {
    const EmbeddedFile& file = kEmbeddedTemplateFiles[i];
    templates.emplace(file.name, CodeTemplate(file.name, file.text));
  }
  return templates;
}

}  // namespace

const CodeTemplate& embedded_template(std::string_view name) {
  static const TemplateMap templates = parse_embedded_templates();
  const auto found = templates.find(name);
  if (found == templates.end()) {
    std::vector<std::string> names;
    for (const auto& [embedded_name, parsed] : templates) names.push_back(embedded_name);
    throw CodegenError({std::string(name)},
                       fmt::format("bp-codegen embeds no template of that name (the files of "
                                   "codegen/templates/){}",
                                   did_you_mean(name, names)));
  }
  return found->second;
}

std::string fill_template(std::string_view name, const TemplateValues& values) {
  return embedded_template(name).substitute(values);
}

}  // namespace bp::codegen
