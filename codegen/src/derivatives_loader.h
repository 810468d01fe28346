// Reading derivatives.yaml against the ops.yaml it extends. Every problem is a CodegenError at
// the offending position, with a suggestion for a misspelled op or argument name.
#pragma once

#include <string>

#include "derivatives.h"
#include "model.h"

namespace bp::codegen {

// The entries point into `functions`, which must outlive the result.
Derivatives load_derivatives(const std::string& path, const NativeFunctions& functions);
// The same from text already in memory; `path` is used in messages only.
Derivatives parse_derivatives(const std::string& yaml_text, const std::string& path,
                              const NativeFunctions& functions);

}  // namespace bp::codegen
