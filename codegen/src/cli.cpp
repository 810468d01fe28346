#include "cli.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "backend_loader.h"
#include "derivatives_loader.h"
#include "diagnostics.h"
#include "file_writer.h"
#include "gen_backend.h"
#include "gen_conformance.h"
#include "gen_core.h"
#include "gen_ops_support.h"
#include "gen_python.h"
#include "yaml_loader.h"

namespace bp::codegen {

namespace {

constexpr const char* kUsage =
    "usage:\n"
    "  bp-codegen core    --ops OPS_YAML --derivatives DERIVATIVES_YAML --public-out DIR\n"
    "                     --internal-out DIR\n"
    "  bp-codegen backend --ops OPS_YAML --backend BACKEND_YAML --out DIR\n"
    "  bp-codegen python  --ops OPS_YAML --output-dir DIR\n"
    "  bp-codegen conformance --ops OPS_YAML --output FILE\n"
    "  bp-codegen check   --ops OPS_YAML [--derivatives DERIVATIVES_YAML] "
    "[--backend BACKEND_YAML]\n"
    "  bp-codegen ops-support --ops OPS_YAML --backend BACKEND_YAML [--backend ...] "
    "--output FILE\n";

struct UsageError {
  std::string message;
};

// In the order given, so that a repeated option keeps its values' order.
using Options = std::multimap<std::string, std::string>;

// `--name value` pairs after the command; only the names in `allowed`, each once unless it is
// one of `repeatable`.
Options parse_options(const std::vector<std::string>& args, const std::vector<std::string>& allowed,
                      const std::vector<std::string>& repeatable = {}) {
  Options options;
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& name = args[i];
    if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
      throw UsageError{fmt::format("unknown option '{}' for '{}'", name, args[0])};
    }
    if (i + 1 >= args.size()) throw UsageError{fmt::format("option '{}' needs a value", name)};
    if (options.count(name) != 0 &&
        std::find(repeatable.begin(), repeatable.end(), name) == repeatable.end()) {
      throw UsageError{fmt::format("option '{}' is given twice", name)};
    }
    options.emplace(name, args[++i]);
  }
  return options;
}

const std::string& required(const Options& options, const std::string& name) {
  auto it = options.find(name);
  if (it == options.end()) throw UsageError{fmt::format("missing option '{}'", name)};
  return it->second;
}

void run_command(const std::vector<std::string>& args, std::ostream& out) {
  if (args.empty()) throw UsageError{"missing command"};
  const std::string& command = args[0];
  if (command == "core") {
    const Options options =
        parse_options(args, {"--ops", "--derivatives", "--public-out", "--internal-out"});
    const std::string& ops = required(options, "--ops");
    const std::string& public_out = required(options, "--public-out");
    const std::string& internal_out = required(options, "--internal-out");
    const std::string& derivatives = required(options, "--derivatives");
    const NativeFunctions functions = load_native_functions(ops);
    write_files(generate_core(functions, load_derivatives(derivatives, functions), public_out,
                              internal_out));
  } else if (command == "backend") {
    const Options options = parse_options(args, {"--ops", "--backend", "--out"});
    const std::string& ops = required(options, "--ops");
    const std::string& backend = required(options, "--backend");
    const std::string& out_dir = required(options, "--out");
    const NativeFunctions functions = load_native_functions(ops);
    write_files(generate_backend(load_backend_config(backend, functions), out_dir));
  } else if (command == "python") {
    const Options options = parse_options(args, {"--ops", "--output-dir"});
    const std::string& ops = required(options, "--ops");
    const std::string& out_dir = required(options, "--output-dir");
    write_files(generate_python(load_native_functions(ops), out_dir));
  } else if (command == "conformance") {
    const Options options = parse_options(args, {"--ops", "--output"});
    const std::string& ops = required(options, "--ops");
    const std::string& output = required(options, "--output");
    write_files({{output, generate_kernel_op_table(load_native_functions(ops))}});
  } else if (command == "check") {
    const Options options = parse_options(args, {"--ops", "--derivatives", "--backend"});
    const NativeFunctions functions = load_native_functions(required(options, "--ops"));
    if (auto it = options.find("--derivatives"); it != options.end()) {
      load_derivatives(it->second, functions);
    }
    if (auto it = options.find("--backend"); it != options.end()) {
      load_backend_config(it->second, functions);
    }
  } else if (command == "ops-support") {
    const Options options = parse_options(args, {"--ops", "--backend", "--output"}, {"--backend"});
    const std::string& ops = required(options, "--ops");
    required(options, "--backend");  // at least one; each is read below
    const std::string& output = required(options, "--output");
    const NativeFunctions functions = load_native_functions(ops);
    std::vector<BackendConfig> backends;
    const auto [first, last] = options.equal_range("--backend");
    for (auto it = first; it != last; ++it)
      backends.push_back(load_backend_config(it->second, functions));
    write_files({{output, generate_ops_support_md(functions, backends)}});
  } else if (command == "--help" || command == "-h" || command == "help") {
    out << kUsage;
  } else {
    throw UsageError{fmt::format("unknown command '{}'", command)};
  }
}

}  // namespace

int run_cli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  try {
    run_command(args, out);
    return 0;
  } catch (const UsageError& e) {
    err << "bp-codegen: " << e.message << "\n" << kUsage;
    return kExitUsage;
  } catch (const CodegenError& e) {
    err << e.what() << "\n";
    return kExitBadInput;
  } catch (const std::exception& e) {
    // A bug in bp-codegen, not in its input; still no partial output (nothing was renamed).
    err << "bp-codegen: internal error: " << e.what() << "\n";
    return kExitBadInput;
  }
}

}  // namespace bp::codegen
