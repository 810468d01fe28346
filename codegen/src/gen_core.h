// The core's generated C++ (see docs/generated-code.md, "Core outputs"): the public API
// under <public-out>/backplane/generated/, the kernel ops' dtypes for the SDK as
// <public-out>/backplane/sdk/kernel_dtypes.h, and the dispatch glue under
// <internal-out>/core_generated/.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "code_template.h"
#include "derivatives.h"
#include "file_writer.h"
#include "model.h"

namespace bp::codegen {

// All eleven files, with their full paths. `derivatives` was read against `functions`.
std::vector<GeneratedFile> generate_core(const NativeFunctions& functions,
                                         const Derivatives& derivatives,
                                         const std::filesystem::path& public_out,
                                         const std::filesystem::path& internal_out);

// Each file's text on its own (gen_core_api.cpp).
std::string generate_functions_h(const NativeFunctions& functions);
std::string generate_tensor_methods_inc(const NativeFunctions& functions);
std::string generate_tensor_methods_inline_h(const NativeFunctions& functions);
std::string generate_functions_cpp(const NativeFunctions& functions,
                                   const Derivatives& derivatives);
std::string generate_composite_functions_h(const NativeFunctions& functions);
// (gen_autograd.cpp: generate_autograd_h, generate_autograd_cpp)
// (gen_core_dispatch.cpp)
std::string generate_op_table_h(const NativeFunctions& functions);
std::string generate_meta_functions_h(const NativeFunctions& functions);
std::string generate_kernels_h(const NativeFunctions& functions);
// (gen_kernel_dtypes.cpp)
std::string generate_kernel_dtypes_h(const NativeFunctions& functions);
// The first statement of a kernel op's wrapper in Kernels.h: the check of its declared
// argument's dtype, or none for an op that takes every dtype.
TemplateLines kernel_dtype_check(const NativeFunction& op);

// The source a generated file's first line names (${source} in the templates): only the file
// name, so that the outputs do not depend on where the tree is checked out.
std::string source_file_name(const std::string& source_path);

}  // namespace bp::codegen
