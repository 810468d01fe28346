// The Python package's generated code (see docs/generated-code.md, "Python outputs"):
// python_functions.cpp, the CPython functions and Tensor methods of every ops.yaml entry with
// their argument-parser signature tables, and _C.pyi, the type stubs of backplane._C.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "file_writer.h"
#include "model.h"

namespace bp::codegen {

// Both files, under `out`. Throws CodegenError for an entry that Python cannot bind.
std::vector<GeneratedFile> generate_python(const NativeFunctions& functions,
                                           const std::filesystem::path& out);

// Each file's text on its own.
std::string generate_python_functions_cpp(const NativeFunctions& functions);
std::string generate_python_stubs(const NativeFunctions& functions);

}  // namespace bp::codegen
