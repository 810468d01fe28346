// A backend's generated C++ (see docs/generated-code.md, "Backend outputs"):
// <Backend>NativeFunctions.h, the functions the plugin author implements, and
// Register<Backend>.cpp, the trampolines, kernel table and exported entry point.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "file_writer.h"
#include "model.h"

namespace bp::codegen {

std::vector<GeneratedFile> generate_backend(const BackendConfig& config,
                                            const std::filesystem::path& out);

std::string generate_native_functions_h(const BackendConfig& config);
std::string generate_register_cpp(const BackendConfig& config);

}  // namespace bp::codegen
