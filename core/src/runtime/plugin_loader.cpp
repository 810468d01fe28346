#include "runtime/plugin_loader.h"

#include "runtime/plugin_call.h"
#include "runtime/plugin_descriptor.h"
#include "runtime/plugin_library.h"
#include "runtime/plugin_rejected.h"
#include "runtime/plugin_status.h"

#include <fmt/format.h>

#include <utility>

namespace bp::detail {
namespace {

std::string plugin_message(const bp_plugin& plugin) {
  const char* message = call_plugin("last_error", [&] { return plugin.last_error(); });
  return message && *message ? message : "(the plugin gave no message)";
}

// The plugin's devices, or none and the plugin's reason when it cannot count them (no driver,
// no platform): such a plugin still loads, so that bp-info can show why.
std::vector<DeviceInfo> describe_devices(const bp_plugin& plugin, int16_t device_type,
                                         std::string& device_note) {
  int32_t count = 0;
  const bp_status status = call_plugin("device_count", [&] { return plugin.device_count(&count); });
  if (status != BP_STATUS_OK) {
    device_note = plugin_message(plugin);
    return {};
  }
  if (count < 0) {
    device_note = fmt::format("the plugin reported {} devices", count);
    return {};
  }
  std::vector<DeviceInfo> devices;
  for (int32_t index = 0; index < count; ++index) {
    bp_device_properties properties{};
    properties.struct_size = sizeof(properties);
    DeviceInfo device;
    device.device = Device(device_type, static_cast<int16_t>(index));
    const bp_status status = call_plugin(
        "device_properties", [&] { return plugin.device_properties(index, &properties); });
    if (status == BP_STATUS_OK) {
      device.name = properties.name ? properties.name : "";
      device.description = properties.description ? properties.description : "";
      device.total_memory = properties.total_memory;
    } else {
      device.description = fmt::format("its properties are unknown: {}", plugin_message(plugin));
    }
    devices.push_back(std::move(device));
  }
  return devices;
}

}  // namespace

bp_plugin read_descriptor(const boost::dll::shared_library& library) {
  const bp_plugin_entry_fn entry = plugin_entry(library);
  return accept_descriptor(
      call_plugin(BP_PLUGIN_ENTRY_SYMBOL, [&] { return entry(BP_ABI_MAJOR, BP_ABI_MINOR); }));
}

StartedPlugin start_plugin(const bp_plugin& plugin, const std::filesystem::path& file,
                           int16_t device_type, const bp_core_services* core_services) {
  if (plugin.attach_core != nullptr) {
    call_plugin("attach_core", [&] { plugin.attach_core(core_services); });
  }
  if (plugin.init != nullptr) {
    const bp_status status = call_plugin("init", [&] { return plugin.init(); });
    if (status != BP_STATUS_OK) {
      throw PluginRejected(fmt::format("its init failed ({}): {}", status_description(status),
                                       plugin_message(plugin)));
    }
  }

  PluginInfo info;
  info.name = plugin.name;
  info.path = file.string();
  info.version = plugin.version ? plugin.version : "";
  info.abi_major = plugin.abi_major;
  info.abi_minor = plugin.abi_minor;
  info.devices = describe_devices(plugin, device_type, info.device_note);
  info.has_events = plugin.event_create != nullptr;

  KernelReview review = review_kernels(plugin);
  for (const AcceptedKernel& kernel : review.accepted) {
    info.ops.emplace_back(kOpNames[static_cast<size_t>(kernel.op)]);
  }
  info.refused_kernels = std::move(review.refused);

  auto backend = std::make_unique<Backend>(plugin, std::move(info), device_type);
  return {std::move(backend), std::move(review.accepted)};
}

}  // namespace bp::detail
