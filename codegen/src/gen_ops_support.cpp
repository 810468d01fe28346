#include "gen_ops_support.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <backplane/sdk/dtype_set.hpp>

#include <algorithm>

#include "embedded_templates.h"

namespace bp::codegen {

namespace {

// The SDK's sets, so that the page lists exactly the dtypes the core lets through.
plugin::DTypeSet sdk_dtype_set(DTypeClass dtypes) {
  switch (dtypes) {
    case DTypeClass::All: return plugin::kAllDTypeSet;
    case DTypeClass::AllButBool: return plugin::kAllButBoolDTypeSet;
    case DTypeClass::Floating: return plugin::kFloatingDTypeSet;
  }
  return {};
}

std::string dtype_names(DTypeClass dtypes) {
  std::vector<std::string_view> names;
  for (const DType dtype : plugin::dtypes_in(sdk_dtype_set(dtypes)))
    names.push_back(plugin::dtype_constant_name(dtype));
  return fmt::format("{}", fmt::join(names, ", "));
}

std::string code(std::string_view text) { return fmt::format("`{}`", text); }

bool implements(const BackendConfig& backend, const NativeFunction& op) {
  return std::any_of(backend.supported.begin(), backend.supported.end(),
                     [&](const SupportedOp& supported) { return supported.function == &op; });
}

// The overloads that the core runs through `op` (their structured_delegate), in ops.yaml order.
std::string delegates_of(const NativeFunctions& functions, const NativeFunction& op) {
  std::vector<std::string> names;
  for (const NativeFunction& f : functions.functions) {
    if (f.structured_delegate == op.func.name) names.push_back(code(f.func.name.str()));
  }
  return fmt::format("{}", fmt::join(names, ", "));
}

// One table row (ops-support.md.kernel.in).
TemplateValues kernel_row(const NativeFunctions& functions,
                          const std::vector<BackendConfig>& backends, const NativeFunction& op) {
  std::vector<std::string_view> support;
  for (const BackendConfig& backend : backends)
    support.push_back(implements(backend, op) ? "✓" : "—");
  return {
      {"op", op.func.name.str()},
      {"dtypes", dtype_names(*op.dtypes)},
      {"argument", op.dtypes_of},
      {"delegates", delegates_of(functions, op)},
      {"support", fmt::format("{}", fmt::join(support, " | "))},
  };
}

void check_backend_names(const NativeFunctions& functions,
                         const std::vector<BackendConfig>& backends) {
  if (backends.empty()) {
    throw CodegenError({functions.path},
                       "the op support page needs at least one backend YAML (--backend)");
  }
  for (size_t i = 0; i < backends.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (backends[j].backend == backends[i].backend) {
        throw CodegenError({backends[i].path},
                           fmt::format("backend '{}' is also named by {}: give each backend once",
                                       backends[i].backend, backends[j].path));
      }
    }
  }
}

}  // namespace

std::string generate_ops_support_md(const NativeFunctions& functions,
                                    const std::vector<BackendConfig>& backends) {
  check_backend_names(functions, backends);
  const std::vector<const NativeFunction*> kernel_ops = functions.kernel_ops();

  TemplateLines sources = {"- " + code(functions.path)};
  std::vector<std::string> header = {"Op", "Dtypes", "Argument", "Also runs"};
  TemplateLines summary;
  for (const BackendConfig& backend : backends) {
    sources.push_back("- " + code(backend.path));
    header.push_back(backend.backend);
    const auto implemented =
        std::count_if(kernel_ops.begin(), kernel_ops.end(),
                      [&](const NativeFunction* op) { return implements(backend, *op); });
    summary.push_back(
        fill_template("ops-support.md.backend.in", {
                                                       {"backend", backend.backend},
                                                       {"source", backend.path},
                                                       {"implemented", std::to_string(implemented)},
                                                       {"total", std::to_string(kernel_ops.size())},
                                                   }));
  }

  std::string rule = "|";
  for (size_t i = 0; i < header.size(); ++i) rule += " --- |";

  TemplateLines rows;
  for (const NativeFunction* op : kernel_ops)
    rows.push_back(fill_template("ops-support.md.kernel.in", kernel_row(functions, backends, *op)));
  TemplateLines composites;
  for (const NativeFunction& f : functions.functions) {
    if (f.composite)
      composites.push_back(
          fill_template("ops-support.md.composite.in", {{"op", f.func.name.str()}}));
  }

  return fill_template("ops-support.md.in",
                       {
                           {"sources", sources},
                           {"summary", summary},
                           {"kernel_table_header", fmt::format("| {} |", fmt::join(header, " | "))},
                           {"kernel_table_rule", rule},
                           {"kernel_ops", rows},
                           {"composites", composites},
                       });
}

}  // namespace bp::codegen
