// The plugin runtime: what loaded, what did not and why, and explicit loading.
#pragma once

#include <backplane/device.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <string_view>
#include <vector>

namespace bp {

struct DeviceInfo {
  Device device;
  std::string name;
  std::string description;
  uint64_t total_memory = 0;
};

struct RefusedKernel {
  std::string op;      // "add.out"
  std::string reason;  // "schema hash 0x... differs from the core's 0x...: rebuild the plugin"
};

struct PluginInfo {
  std::string name;  // backend name, "cpu"
  std::string path;  // the file it loaded from
  std::string version;
  uint32_t abi_major = 0;
  uint32_t abi_minor = 0;
  std::vector<DeviceInfo> devices;
  std::string device_note;  // why there are no devices, when the plugin said so
  // Whether the plugin has events of its own (ABI 1.2): without them bp::Event waits for the
  // device when it records.
  bool has_events = false;
  std::vector<std::string> ops;  // kernels accepted, in ops.yaml order
  std::vector<RefusedKernel> refused_kernels;
};

struct PluginFailure {
  std::string path;
  std::string reason;
};

// A number a backend reports about itself ("primitive_cache.hits").
struct BackendCounter {
  std::string name;
  uint64_t value = 0;
};

struct RuntimeInfo {
  std::vector<PluginInfo> plugins;
  std::vector<PluginFailure> failures;
  std::vector<std::string> warnings;    // bad BACKPLANE_* values and the like
  std::vector<std::string> kernel_ops;  // every op of ops.yaml that backends implement
  Device default_device;                // bp::default_device()
  // With BACKPLANE_VALIDATE=1, what it found so far: each kernel that left part of an output
  // unwritten or wrote an input, once per op, device type, argument and kind.
  std::vector<std::string> validation_findings;
};

// Loads plugins on first use (thread-safe), then describes the runtime.
RuntimeInfo runtime_info();
// Loads one more plugin now, and returns its description. A file already loaded (by this call
// or from the environment, under any path) is not loaded again: its description is returned.
// Throws bp::Error with the reason when it cannot be loaded; the failure is also kept in
// runtime_info().failures.
PluginInfo load_plugin(const std::string& path);
// Every device of every loaded backend, the host first.
std::vector<Device> devices();
// The counters of the loaded backend named `backend` ("cpu"), read from the plugin now, in the
// plugin's order; empty for a plugin that reports none. Throws bp::Error naming the loaded
// backends when none is called `backend`.
std::vector<BackendCounter> backend_counters(std::string_view backend);

// Whether BACKPLANE_TRACE is recording (loads plugins on first use, as tracing starts then).
bool tracing();
// While tracing, keeps for the trace a span of work other than a kernel op (a collective, say):
// an event named `name` in category `category`, on the calling thread, from `start` until now,
// with `args` (name and value) as its arguments. Does nothing while not tracing.
void trace_span(std::string_view name, std::string_view category,
                std::chrono::steady_clock::time_point start,
                const std::vector<std::pair<std::string, std::string>>& args);

}  // namespace bp
