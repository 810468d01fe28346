// Reading ops.yaml into NativeFunctions. Every problem is a CodegenError at the offending
// position; the result has passed validate_native_functions().
#pragma once

#include <string>

#include "model.h"

namespace bp::codegen {

NativeFunctions load_native_functions(const std::string& path);
// The same from text already in memory; `path` is used in messages only.
NativeFunctions parse_native_functions(const std::string& yaml_text, const std::string& path);

}  // namespace bp::codegen
