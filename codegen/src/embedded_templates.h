// The templates of codegen/templates/, embedded into bp-codegen when it is built
// (backplane_embed_files, cmake/BackplaneEmbed.cmake): an installed bp-codegen runs without
// its source tree.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "code_template.h"

namespace bp::codegen {

struct EmbeddedFile {
  const char* name;  // "Kernels.h.in"
  const char* text;
};
extern const EmbeddedFile kEmbeddedTemplateFiles[];
extern const size_t kEmbeddedTemplateFileCount;

// codegen/templates/<name>, parsed when a template is first asked for. A CodegenError when
// bp-codegen has no template of that name.
const CodeTemplate& embedded_template(std::string_view name);

// embedded_template(name).substitute(values): how every generator makes its text.
std::string fill_template(std::string_view name, const TemplateValues& values);

}  // namespace bp::codegen
