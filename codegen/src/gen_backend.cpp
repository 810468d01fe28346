#include "gen_backend.h"

#include <fmt/format.h>

#include "cpp_types.h"
#include "gen_core.h"

namespace bp::codegen {

namespace {

std::string native_functions_header_name(const BackendConfig& config) {
  return config.backend + "NativeFunctions.h";
}

std::string register_file_name(const BackendConfig& config) {
  return "Register" + config.backend + ".cpp";
}

// The C name of an op's trampoline. It has C language linkage, so the backend name keeps it
// distinct from any other C symbol in the plugin.
std::string trampoline_name(const BackendConfig& config, const NativeFunction& op) {
  return fmt::format("bp_{}_kernel_{}", config.lower_case_name(), op.func.name.cpp_name());
}

// How a trampoline turns one C argument into what the author's function takes: statements
// that run inside the guard (TensorView's constructor may throw), and the expression passed.
struct PluginArgument {
  std::vector<std::string> statements;
  std::string expression;
};

PluginArgument plugin_argument(const Argument& a) {
  const std::string& n = a.name;
  switch (classify(a.type)) {
    case TypeCategory::Tensor:
      return {{fmt::format("const bp::plugin::TensorView {0}_view({0});", n)}, n + "_view"};
    case TypeCategory::OptionalTensor:
      return {{fmt::format("std::optional<bp::plugin::TensorView> {0}_view;", n),
               fmt::format("if ({0} != nullptr) {0}_view.emplace({0});", n)},
              fmt::format("{0}_view ? &*{0}_view : nullptr", n)};
    case TypeCategory::TensorList:
      return {
          {fmt::format("std::vector<bp::plugin::TensorView> {0}_views;", n),
           fmt::format("{0}_views.reserve(static_cast<size_t>({0}.size));", n),
           fmt::format(
               "for (int64_t i = 0; i < {0}.size; ++i) {0}_views.emplace_back({0}.data[i]);", n)},
          fmt::format("std::span<const bp::plugin::TensorView>({}_views)", n)};
    case TypeCategory::Scalar:
      return {{}, fmt::format("bp::Scalar({})", n)};
    case TypeCategory::Int:
    case TypeCategory::Float:
      return {{}, n};
    case TypeCategory::OptionalInt:
      return {{},
              fmt::format("{0}.has_value ? std::optional<int64_t>({0}.value) : std::nullopt", n)};
    case TypeCategory::OptionalFloat:
      return {{},
              fmt::format("{0}.has_value ? std::optional<double>({0}.value) : std::nullopt", n)};
    case TypeCategory::IntList:
      return {{},
              fmt::format("std::span<const int64_t>({0}.data, static_cast<size_t>({0}.size))", n)};
    case TypeCategory::OptionalIntList:
      return {{},
              fmt::format(
                  "{0}.data != nullptr ? std::optional<std::span<const int64_t>>(std::in_place, "
                  "{0}.data, static_cast<size_t>({0}.size)) : std::nullopt",
                  n)};
    case TypeCategory::Bool:
      return {{}, fmt::format("{} != 0", n)};
    case TypeCategory::Str:
      return {{}, fmt::format("std::string_view({})", n)};
    case TypeCategory::OptionalScalarType:
      return {{},
              fmt::format("{0} == BP_DTYPE_NONE ? std::optional<bp::DType>() : "
                          "std::optional<bp::DType>(static_cast<bp::DType>({0}))",
                          n)};
    case TypeCategory::OptionalDevice:
      break;
  }
  throw std::logic_error(a.type.str() + " cannot reach a kernel");
}

}  // namespace

std::string generate_native_functions_h(const BackendConfig& config) {
  std::string s = generated_file_banner(
      config.path, fmt::format("the kernels the {} backend implements", config.backend));
  s += fmt::format(R"(#pragma once

#include <backplane/sdk/plugin.hpp>

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

// Each function fills its op's outputs, which the core allocated with the shapes, dtypes and
// devices its meta step computed; inputs arrive broadcast and converted. Report a failure by
// throwing (bp::plugin::Error carries a status; any other exception becomes
// BP_STATUS_INTERNAL).
namespace {} {{
)",
                   config.cpp_namespace);
  for (const SupportedOp& supported : config.supported) {
    const NativeFunction& op = *supported.function;
    std::vector<std::string> parameters;
    for (const Argument& a : op.func.arguments)
      parameters.push_back(plugin_cpp_type(a) + " " + a.name);
    s += fmt::format("\n// {}\nvoid {}({});\n", op.func.str(), op.func.name.cpp_name(),
                     comma_list(parameters));
  }
  s += R"(
// Written by the plugin author: sets the descriptor's device and memory functions and the
// optional init and shutdown. The generated entry point has filled in everything else.
void configure_plugin(bp_plugin& plugin);

)";
  s += fmt::format("}}  // namespace {}\n", config.cpp_namespace);
  return s;
}

std::string generate_register_cpp(const BackendConfig& config) {
  const std::string lower = config.lower_case_name();
  std::string s = generated_file_banner(
      config.path, fmt::format("the {} plugin's kernel table and entry point", config.backend));
  s += fmt::format(R"(#include "{}"

#include <backplane/sdk/plugin.hpp>

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

// Trampolines: each has its kernel's exact C signature, wraps the arguments for the author's
// function and runs it inside bp::plugin::guard, so that no exception crosses the ABI.
extern "C" {{

static const char* bp_{}_last_error(void) {{ return bp::plugin::last_error(); }}
)",
                   native_functions_header_name(config), lower);
  for (const SupportedOp& supported : config.supported) {
    const NativeFunction& op = *supported.function;
    std::vector<std::string> parameters;
    std::vector<std::string> statements;
    std::vector<std::string> call_arguments;
    for (const Argument& a : op.func.arguments) {
      parameters.push_back(abi_c_type(a) + " " + a.name);
      PluginArgument converted = plugin_argument(a);
      for (std::string& statement : converted.statements)
        statements.push_back(std::move(statement));
      call_arguments.push_back(converted.expression);
    }
    s += fmt::format("\n// {}\nstatic bp_status {}({}) {{\n", op.func.str(),
                     trampoline_name(config, op), comma_list(parameters));
    s += "  return bp::plugin::guard([&] {\n";
    for (const std::string& statement : statements)
      s += "    " + statement + "\n";
    s += fmt::format("    {}::{}({});\n", config.cpp_namespace, op.func.name.cpp_name(),
                     comma_list(call_arguments));
    s += "  });\n}\n";
  }
  s += "\n}  // extern \"C\"\n\n";

  s += R"(namespace {

// The table stores kernels type-erased; the core casts each back to the signature its schema
// hash vouches for. Casting through void (*)() tells the compiler the cast is meant.
template <typename Kernel>
bp_kernel_fn type_erased(Kernel* kernel) {
  return reinterpret_cast<bp_kernel_fn>(reinterpret_cast<void (*)()>(kernel));
}

)";
  // {struct_size, name, schema hash, kernel}: the core refuses a kernel whose schema hash
  // differs from its own, so a plugin built from another ops.yaml fails loudly.
  std::string table;
  for (const SupportedOp& supported : config.supported) {
    const NativeFunction& op = *supported.function;
    table += fmt::format("      {{sizeof(bp_kernel), \"{}\", 0x{:016x}ull, type_erased(&{})}},\n",
                         op.func.name.str(), op.func.hash(), trampoline_name(config, op));
  }
  if (config.supported.empty())
    table = "      {sizeof(bp_kernel), nullptr, 0, nullptr},  // none\n";
  s += fmt::format(R"(const bp_plugin* make_descriptor() {{
  static const bp_kernel kernels[] = {{
{}  }};
  static bp_plugin plugin{{}};
  plugin.struct_size = sizeof(bp_plugin);
  plugin.abi_major = BP_ABI_MAJOR;
  plugin.abi_minor = BP_ABI_MINOR;
  plugin.name = "{}";
  plugin.version = "{}";
  plugin.last_error = &bp_{}_last_error;
  plugin.kernels = kernels;
  plugin.kernel_count = {};
  // The plugin's messages (bp::plugin::warn) go through the core, which attaches itself.
  bp::plugin::connect_to_core(plugin);
  // If configure_plugin throws, the descriptor's init fails with its message instead.
  bp::plugin::configure_descriptor(plugin, [](bp_plugin& p) {{ {}::configure_plugin(p); }});
  return &plugin;
}}

}}  // namespace

// The core checks abi_major itself and reports a mismatch by name, so the descriptor is
// returned whatever version the core passes.
extern "C" BP_PLUGIN_EXPORT const bp_plugin* backplane_plugin_entry(uint32_t core_abi_major,
                                                                     uint32_t core_abi_minor) {{
  (void)core_abi_major;
  (void)core_abi_minor;
  static const bp_plugin* const descriptor = make_descriptor();
  return descriptor;
}}
)",
                   table, lower, config.version, lower, config.supported.size(),
                   config.cpp_namespace);
  return s;
}

std::vector<GeneratedFile> generate_backend(const BackendConfig& config,
                                            const std::filesystem::path& out) {
  return {
      {out / native_functions_header_name(config), generate_native_functions_h(config)},
      {out / register_file_name(config), generate_register_cpp(config)},
  };
}

}  // namespace bp::codegen
