#include "gen_core.h"

#include "gen_autograd.h"

namespace bp::codegen {

std::string source_file_name(const std::string& source_path) {
  return std::filesystem::path(source_path).filename().string();
}

std::vector<GeneratedFile> generate_core(const NativeFunctions& functions,
                                         const Derivatives& derivatives,
                                         const std::filesystem::path& public_out,
                                         const std::filesystem::path& internal_out) {
  const auto api = public_out / "backplane" / "generated";
  const auto internal = internal_out / "core_generated";
  return {
      {api / "Functions.h", generate_functions_h(functions)},
      {api / "TensorMethods.inc", generate_tensor_methods_inc(functions)},
      {api / "TensorMethodsInline.h", generate_tensor_methods_inline_h(functions)},
      {public_out / "backplane" / "sdk" / "kernel_dtypes.h", generate_kernel_dtypes_h(functions)},
      {internal / "OpTable.h", generate_op_table_h(functions)},
      {internal / "MetaFunctions.h", generate_meta_functions_h(functions)},
      {internal / "Kernels.h", generate_kernels_h(functions)},
      {internal / "CompositeFunctions.h", generate_composite_functions_h(functions)},
      {internal / "Functions.cpp", generate_functions_cpp(functions, derivatives)},
      {internal / "Autograd.h", generate_autograd_h(derivatives)},
      {internal / "Autograd.cpp", generate_autograd_cpp(derivatives)},
  };
}

}  // namespace bp::codegen
