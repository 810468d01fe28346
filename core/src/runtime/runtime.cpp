// The public face of the registry (backplane/runtime.h).
#include <backplane/runtime.h>

#include "runtime/registry.h"

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

}  // namespace bp
