// <backplane/sdk/kernel_dtypes.h>: what ops.yaml's `dtypes:` and `dtypes_of:` say about each
// kernel op, as types that the SDK's visit_dtype and require_dtype_of take; and the core's check
// of the declared argument in each kernel wrapper (Kernels.h).
#include <fmt/format.h>

#include "gen_core.h"

namespace bp::codegen {

namespace {

// The SDK's set for a class (sdk/include/backplane/sdk/dtype_set.hpp).
std::string_view sdk_dtype_set(DTypeClass dtypes) {
  switch (dtypes) {
    case DTypeClass::All:
      return "kAllDTypeSet";
    case DTypeClass::AllButBool:
      return "kAllButBoolDTypeSet";
    case DTypeClass::Floating:
      return "kFloatingDTypeSet";
  }
  return "?";
}

std::string_view what_it_takes(DTypeClass dtypes) {
  switch (dtypes) {
    case DTypeClass::All:
      return "every dtype";
    case DTypeClass::AllButBool:
      return "every dtype but Bool";
    case DTypeClass::Floating:
      return "the floating dtypes";
  }
  return "?";
}

}  // namespace

std::string generate_kernel_dtypes_h(const NativeFunctions& functions) {
  std::string s = generated_file_banner(functions.path, "the dtypes each kernel op takes");
  s += R"(#pragma once

#include <backplane/sdk/dtype_set.hpp>

#include <string_view>

// One type per kernel op (each `structured: true` entry), named as the op's OpId: the op's
// name, the tensor argument whose dtype ops.yaml declares, and the dtypes it takes there.
namespace bp::plugin::kernel_dtypes {
)";
  for (const NativeFunction* op : functions.kernel_ops()) {
    s += fmt::format(
        "\n// {0} takes {1} in `{2}`.\n"
        "struct {3} {{\n"
        "  static constexpr std::string_view op = \"{0}\";\n"
        "  static constexpr std::string_view argument = \"{2}\";\n"
        "  static constexpr DTypeSet dtypes = {4};\n"
        "}};\n",
        op->func.name.str(), what_it_takes(*op->dtypes), op->dtypes_of,
        op->func.name.cpp_name(), sdk_dtype_set(*op->dtypes));
  }
  s += "\n}  // namespace bp::plugin::kernel_dtypes\n";
  return s;
}

std::string kernel_dtype_check(const NativeFunction& op) {
  // An op that takes every dtype has nothing to check, and its path to the kernel stays as short.
  if (*op.dtypes == DTypeClass::All) return "";
  return fmt::format("  check_kernel_dtype<plugin::kernel_dtypes::{}>({});\n",
                     op.func.name.cpp_name(), op.dtypes_of);
}

}  // namespace bp::codegen
