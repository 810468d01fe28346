// <backplane/sdk/kernel_dtypes.h>: what ops.yaml's `dtypes:` and `dtypes_of:` say about each
// kernel op, as types that the SDK's visit_dtype and require_dtype_of take; and the core's check
// of the declared argument in each kernel wrapper (Kernels.h).
#include <fmt/format.h>

#include "embedded_templates.h"
#include "gen_core.h"

namespace bp::codegen {

namespace {

// The SDK's set for a class (sdk/include/backplane/sdk/dtype_set.hpp).
std::string_view sdk_dtype_set(DTypeClass dtypes) {
  switch (dtypes) {
    case DTypeClass::All: return "kAllDTypeSet";
    case DTypeClass::AllButBool: return "kAllButBoolDTypeSet";
    case DTypeClass::Floating: return "kFloatingDTypeSet";
  }
  return "?";
}

std::string_view what_it_takes(DTypeClass dtypes) {
  switch (dtypes) {
    case DTypeClass::All: return "every dtype";
    case DTypeClass::AllButBool: return "every dtype but Bool";
    case DTypeClass::Floating: return "the floating dtypes";
  }
  return "?";
}

// What ops.yaml declares about `op`'s dtypes (kernel_dtypes.h.kernel.in).
TemplateValues kernel_dtypes(const NativeFunction& op) {
  return {
      {"op", op.func.name.str()},
      {"what_it_takes", std::string(what_it_takes(*op.dtypes))},
      {"argument", op.dtypes_of},
      {"cpp_name", op.func.name.cpp_name()},
      {"dtype_set", std::string(sdk_dtype_set(*op.dtypes))},
  };
}

}  // namespace

std::string generate_kernel_dtypes_h(const NativeFunctions& functions) {
  TemplateLines kernels;
  for (const NativeFunction* op : functions.kernel_ops())
    kernels.push_back(fill_template("kernel_dtypes.h.kernel.in", kernel_dtypes(*op)));
  return fill_template("kernel_dtypes.h.in", {
                                                 {"source", source_file_name(functions.path)},
                                                 {"kernels", kernels},
                                             });
}

TemplateLines kernel_dtype_check(const NativeFunction& op) {
  // An op that takes every dtype has nothing to check, and its path to the kernel stays as short.
  if (*op.dtypes == DTypeClass::All) return {};
  return {fmt::format("check_kernel_dtype<plugin::kernel_dtypes::{}>({});", op.func.name.cpp_name(),
                      op.dtypes_of)};
}

}  // namespace bp::codegen
