// bp-info: which plugins loaded, their devices and op coverage, and which plugins failed and
// why; with --check, an exit status that tells a script whether anything failed. The
// environment (BACKPLANE_BACKENDS, BACKPLANE_PLUGIN_PATH, ...) applies as it does to any program.
#include "json_writer.h"

#if BP_INFO_DISTRIBUTED
#include <backplane/distributed.h>
#endif
#include "support/byte_size.h"

#include <backplane/error.h>
#include <backplane/runtime.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace {

constexpr std::string_view kUsage =
    "usage: bp-info [--json] [--check]\n"
    "\n"
    "Shows the Backplane plugins this environment loads: each plugin's devices and the ops it\n"
    "implements, each plugin that failed to load and why, and warnings about BACKPLANE_*\n"
    "variables. Plugins are searched in BACKPLANE_PLUGIN_PATH, then next to libbackplane;\n"
    "BACKPLANE_BACKENDS selects among them.\n"
    "\n"
    "  --json     print the same as one JSON object:\n"
    "             {\"plugins\": [{\"name\", \"path\", \"version\", \"abi\", \"devices\", \"ops\",\n"
    "                           \"counters\": {\"<name>\": <value>, ...}, ...}],\n"
    "              \"failures\": [{\"path\", \"reason\"}], \"warnings\": [...],\n"
    "              \"validation_findings\": [...]}\n"
    "  --check    exit with status 1 when a plugin failed to load or a plugin's kernel was\n"
    "             refused, 0 otherwise (warnings do not count); print only those problems\n"
    "             with their reasons, or with --json the JSON object as usual\n"
    "  -h, --help print this help\n"
    "\n"
    "Exit status: 0, or 1 for a problem --check found, or 2 for a bad argument.\n";

// The kernel ops of ops.yaml that `plugin` has no kernel for, in ops.yaml order.
std::vector<std::string> missing_ops(const bp::RuntimeInfo& runtime, const bp::PluginInfo& plugin) {
  std::vector<std::string> missing;
  for (const std::string& op : runtime.kernel_ops) {
    if (std::find(plugin.ops.begin(), plugin.ops.end(), op) == plugin.ops.end()) {
      missing.push_back(op);
    }
  }
  return missing;
}

// A plugin's counters as they are now, or why they could not be read.
struct Counters {
  std::vector<bp::BackendCounter> values;
  std::string error;
};

Counters read_counters(const bp::PluginInfo& plugin) {
  try {
    return {bp::backend_counters(plugin.name), {}};
  } catch (const bp::Error& e) {
    return {{}, e.what()};
  }
}

std::string format_memory(uint64_t bytes) {
  return bytes == 0 ? "memory unknown" : bp::detail::format_bytes(bytes);
}

void print_plugin(const bp::RuntimeInfo& runtime, const bp::PluginInfo& plugin) {
  fmt::print("{} {} (ABI {}.{})\n  {}\n", plugin.name, plugin.version, plugin.abi_major,
             plugin.abi_minor, plugin.path);
  if (plugin.devices.empty()) {
    fmt::print("  devices: none{}\n",
               plugin.device_note.empty() ? "" : fmt::format(": {}", plugin.device_note));
  } else {
    fmt::print("  devices:\n");
    for (const bp::DeviceInfo& device : plugin.devices) {
      fmt::print("    {}: {}, {}{}\n", device.device.str(), device.name,
                 format_memory(device.total_memory),
                 device.description.empty() ? "" : fmt::format(" ({})", device.description));
    }
  }
  fmt::print("  events: {}\n", plugin.has_events ? "yes" : "none (bp::Event waits for the device)");
  const std::vector<std::string> missing = missing_ops(runtime, plugin);
  fmt::print("  ops: {}/{}{}\n", plugin.ops.size(), runtime.kernel_ops.size(),
             missing.empty() ? "" : fmt::format(", missing: {}", fmt::join(missing, ", ")));
  for (const bp::RefusedKernel& refused : plugin.refused_kernels) {
    fmt::print("  refused kernel {}: {}\n", refused.op, refused.reason);
  }
  const Counters counters = read_counters(plugin);
  if (!counters.error.empty()) {
    fmt::print("  counters: unavailable: {}\n", counters.error);
  } else if (!counters.values.empty()) {
    std::vector<std::string> parts;
    for (const bp::BackendCounter& counter : counters.values) {
      parts.push_back(fmt::format("{} {}", counter.name, counter.value));
    }
    fmt::print("  counters: {}\n", fmt::join(parts, ", "));
  }
}

// What bp::distributed says of the MPI library and each device's path to it, where it is built.
std::vector<std::string> collectives() {
#if BP_INFO_DISTRIBUTED
  return bp::distributed::describe();
#else
  return {};
#endif
}

void print_human(const bp::RuntimeInfo& runtime) {
  if (runtime.plugins.empty()) {
    fmt::print("No plugin loaded.\n");
  } else {
    fmt::print("Default device: {}\n\n", runtime.default_device.str());
    fmt::print("Plugins loaded:\n\n");
    for (const bp::PluginInfo& plugin : runtime.plugins) {
      print_plugin(runtime, plugin);
      fmt::print("\n");
    }
  }
  if (const std::vector<std::string> lines = collectives(); !lines.empty()) {
    fmt::print("Collectives (bp::distributed):\n");
    for (const std::string& line : lines) fmt::print("  {}\n", line);
    fmt::print("\n");
  }
  if (!runtime.failures.empty()) {
    fmt::print("Plugins that failed to load:\n\n");
    for (const bp::PluginFailure& failure : runtime.failures) {
      fmt::print("{}\n  {}\n\n", failure.path, failure.reason);
    }
  }
  if (!runtime.warnings.empty()) {
    fmt::print("Warnings:\n");
    for (const std::string& warning : runtime.warnings) fmt::print("  {}\n", warning);
  }
  if (!runtime.validation_findings.empty()) {
    fmt::print("Validation findings (BACKPLANE_VALIDATE):\n");
    for (const std::string& finding : runtime.validation_findings) fmt::print("  {}\n", finding);
  }
}

std::string plugin_json(const bp::RuntimeInfo& runtime, const bp::PluginInfo& plugin) {
  using namespace bp::tools;
  std::vector<std::string> devices;
  for (const bp::DeviceInfo& device : plugin.devices) {
    devices.push_back(json_object({{"device", json_string(device.device.str())},
                                   {"name", json_string(device.name)},
                                   {"description", json_string(device.description)},
                                   {"total_memory", std::to_string(device.total_memory)}}));
  }
  std::vector<std::string> refused;
  for (const bp::RefusedKernel& kernel : plugin.refused_kernels) {
    refused.push_back(
        json_object({{"op", json_string(kernel.op)}, {"reason", json_string(kernel.reason)}}));
  }
  const Counters counters = read_counters(plugin);
  std::vector<std::pair<std::string_view, std::string>> counter_members;
  for (const bp::BackendCounter& counter : counters.values) {
    counter_members.emplace_back(counter.name, std::to_string(counter.value));
  }
  return json_object({
      {"name", json_string(plugin.name)},
      {"path", json_string(plugin.path)},
      {"version", json_string(plugin.version)},
      {"abi", json_string(fmt::format("{}.{}", plugin.abi_major, plugin.abi_minor))},
      {"devices", json_array(devices)},
      {"device_note", json_string(plugin.device_note)},
      {"ops", json_string_array(plugin.ops)},
      {"missing_ops", json_string_array(missing_ops(runtime, plugin))},
      {"refused_kernels", json_array(refused)},
      {"counters", json_object(counter_members)},
      {"counters_error", json_string(counters.error)},
      {"events", plugin.has_events ? "true" : "false"},
  });
}

void print_json(const bp::RuntimeInfo& runtime) {
  using namespace bp::tools;
  std::vector<std::string> plugins;
  for (const bp::PluginInfo& plugin : runtime.plugins)
    plugins.push_back(plugin_json(runtime, plugin));
  std::vector<std::string> failures;
  for (const bp::PluginFailure& failure : runtime.failures) {
    failures.push_back(json_object(
        {{"path", json_string(failure.path)}, {"reason", json_string(failure.reason)}}));
  }
  fmt::print("{}\n", json_object({{"plugins", json_array(plugins)},
                                  {"failures", json_array(failures)},
                                  {"default_device", json_string(runtime.default_device.str())},
                                  {"warnings", json_string_array(runtime.warnings)},
                                  {"collectives", json_string_array(collectives())},
                                  {"validation_findings",
                                   json_string_array(runtime.validation_findings)}}));
}

// What --check fails for: every plugin that failed to load and every kernel that a loaded
// plugin offered and the core refused, each with its reason.
std::vector<std::string> check_problems(const bp::RuntimeInfo& runtime) {
  std::vector<std::string> problems;
  for (const bp::PluginFailure& failure : runtime.failures) {
    problems.push_back(fmt::format("plugin {} failed to load: {}", failure.path, failure.reason));
  }
  for (const bp::PluginInfo& plugin : runtime.plugins) {
    for (const bp::RefusedKernel& refused : plugin.refused_kernels) {
      problems.push_back(fmt::format("plugin {} ({}): kernel {} was refused: {}", plugin.name,
                                     plugin.path, refused.op, refused.reason));
    }
  }
  return problems;
}

void print_check(const bp::RuntimeInfo& runtime, const std::vector<std::string>& problems) {
  if (problems.empty()) {
    fmt::print(
        "bp-info --check: {} plugin(s) loaded; none failed to load and no kernel was "
        "refused\n",
        runtime.plugins.size());
    return;
  }
  fmt::print("bp-info --check: {} problem(s):\n", problems.size());
  for (const std::string& problem : problems) fmt::print("  {}\n", problem);
}

}  // namespace

int main(int argc, char** argv) {
  bool json = false;
  bool check = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--json") {
      json = true;
    } else if (arg == "--check") {
      check = true;
    } else if (arg == "-h" || arg == "--help") {
      fmt::print("{}", kUsage);
      return 0;
    } else {
      fmt::print(stderr, "bp-info: unknown argument '{}'\n\n{}", arg, kUsage);
      return 2;
    }
  }
  const bp::RuntimeInfo runtime = bp::runtime_info();
  const std::vector<std::string> problems =
      check ? check_problems(runtime) : std::vector<std::string>{};
  if (json) {
    print_json(runtime);
  } else if (check) {
    print_check(runtime, problems);
  } else {
    print_human(runtime);
  }
  return problems.empty() ? 0 : 1;
}
