#include "gen_backend.h"

#include <fmt/format.h>

#include "cpp_types.h"
#include "embedded_templates.h"
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
    case TypeCategory::Scalar: return {{}, fmt::format("bp::Scalar({})", n)};
    case TypeCategory::Int:
    case TypeCategory::Float: return {{}, n};
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
    case TypeCategory::Bool: return {{}, fmt::format("{} != 0", n)};
    case TypeCategory::Str: return {{}, fmt::format("std::string_view({})", n)};
    case TypeCategory::ScalarType: return {{}, fmt::format("static_cast<bp::DType>({})", n)};
    case TypeCategory::OptionalScalarType:
      return {{},
              fmt::format("{0} == BP_DTYPE_NONE ? std::optional<bp::DType>() : "
                          "std::optional<bp::DType>(static_cast<bp::DType>({0}))",
                          n)};
    case TypeCategory::OptionalDevice: break;
  }
  throw std::logic_error(a.type.str() + " cannot reach a kernel");
}

// The function the author implements for `op` (BackendNativeFunctions.h.kernel.in).
TemplateValues kernel_declaration(const NativeFunction& op) {
  std::vector<std::string> parameters;
  for (const Argument& a : op.func.arguments)
    parameters.push_back(plugin_cpp_type(a) + " " + a.name);
  return {
      {"schema", op.func.str()},
      {"cpp_name", op.func.name.cpp_name()},
      {"parameters", comma_list(parameters)},
  };
}

// The C function the kernel table holds for `op` (RegisterBackend.cpp.trampoline.in).
TemplateValues trampoline(const BackendConfig& config, const NativeFunction& op) {
  std::vector<std::string> parameters;
  TemplateLines argument_views;
  std::vector<std::string> arguments;
  for (const Argument& a : op.func.arguments) {
    parameters.push_back(abi_c_type(a) + " " + a.name);
    PluginArgument converted = plugin_argument(a);
    for (std::string& statement : converted.statements)
      argument_views.push_back(std::move(statement));
    arguments.push_back(converted.expression);
  }
  return {
      {"schema", op.func.str()},
      {"trampoline", trampoline_name(config, op)},
      {"parameters", comma_list(parameters)},
      {"argument_views", argument_views},
      {"cpp_namespace", config.cpp_namespace},
      {"cpp_name", op.func.name.cpp_name()},
      {"arguments", comma_list(arguments)},
  };
}

// {struct_size, name, schema hash, kernel}: the core refuses a kernel whose schema hash
// differs from its own, so a plugin built from another ops.yaml fails loudly.
TemplateLines kernel_table(const BackendConfig& config) {
  TemplateLines table;
  for (const SupportedOp& supported : config.supported) {
    const NativeFunction& op = *supported.function;
    table.push_back(fmt::format("{{sizeof(bp_kernel), \"{}\", 0x{:016x}ull, type_erased(&{})}},",
                                op.func.name.str(), op.func.hash(), trampoline_name(config, op)));
  }
  // An array may not be empty.
  if (table.empty()) table.push_back("{sizeof(bp_kernel), nullptr, 0, nullptr},  // none");
  return table;
}

}  // namespace

std::string generate_native_functions_h(const BackendConfig& config) {
  TemplateLines kernels;
  for (const SupportedOp& supported : config.supported) {
    kernels.push_back(fill_template("BackendNativeFunctions.h.kernel.in",
                                    kernel_declaration(*supported.function)));
  }
  return fill_template("BackendNativeFunctions.h.in", {
                                                          {"source", source_file_name(config.path)},
                                                          {"backend", config.backend},
                                                          {"cpp_namespace", config.cpp_namespace},
                                                          {"kernels", kernels},
                                                      });
}

std::string generate_register_cpp(const BackendConfig& config) {
  TemplateLines trampolines;
  for (const SupportedOp& supported : config.supported) {
    trampolines.push_back(fill_template("RegisterBackend.cpp.trampoline.in",
                                        trampoline(config, *supported.function)));
  }
  return fill_template("RegisterBackend.cpp.in",
                       {
                           {"source", source_file_name(config.path)},
                           {"backend", config.backend},
                           {"native_functions_header", native_functions_header_name(config)},
                           {"plugin_name", config.lower_case_name()},
                           {"trampolines", trampolines},
                           {"kernel_table", kernel_table(config)},
                           {"version", config.version},
                           {"kernel_count", std::to_string(config.supported.size())},
                           {"cpp_namespace", config.cpp_namespace},
                       });
}

std::vector<GeneratedFile> generate_backend(const BackendConfig& config,
                                            const std::filesystem::path& out) {
  return {
      {out / native_functions_header_name(config), generate_native_functions_h(config)},
      {out / register_file_name(config), generate_register_cpp(config)},
  };
}

}  // namespace bp::codegen
