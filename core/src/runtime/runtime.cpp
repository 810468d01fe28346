// The public face of the registry (backplane/runtime.h).
#include <backplane/runtime.h>

#include "dispatch/op_trace.h"
#include "runtime/registry.h"

#include <backplane/error.h>

#include <fmt/format.h>

namespace bp {

RuntimeInfo runtime_info() { return detail::Registry::get().info(); }

PluginInfo load_plugin(const std::string& path) { return detail::Registry::get().load(path); }

std::vector<Device> devices() {
  std::vector<Device> all{Device::cpu()};
  for (const PluginInfo& plugin : runtime_info().plugins) {
    for (const DeviceInfo& device : plugin.devices) {
      if (device.device != Device::cpu()) all.push_back(device.device);
    }
  }
  return all;
}

std::vector<BackendCounter> backend_counters(std::string_view backend) {
  const detail::Registry& registry = detail::Registry::get();
  const std::optional<int16_t> type = registry.device_type_of(backend);
  const detail::Backend* loaded = type ? registry.backend(*type) : nullptr;
  if (loaded == nullptr) {
    const std::string names = registry.loaded_backend_names();
    throw Error(ErrorCode::InvalidArgument,
                fmt::format("backend_counters: no backend named '{}' is loaded; loaded: {}",
                            backend, names.empty() ? std::string("none") : names));
  }
  return loaded->counters();
}

bool tracing() {
  detail::Registry::get();
  return detail::g_tracing.load(std::memory_order_relaxed);
}

void trace_span(std::string_view name, std::string_view category,
                std::chrono::steady_clock::time_point start,
                const std::vector<std::pair<std::string, std::string>>& args) {
  detail::record_traced_span(name, category, start, args);
}

}  // namespace bp
