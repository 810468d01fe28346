// Running the author's configure_plugin from the generated entry point. A plugin that cannot
// configure itself (its driver library is missing, say) still returns a descriptor: one with no
// devices or kernels whose init fails with the reason, so that the core reports that reason as
// why the plugin did not load. Returning NULL instead would lose it.
#pragma once

#include <backplane/abi.h>
#include <backplane/sdk/status.hpp>

#include <exception>
#include <string>

namespace bp::plugin {
namespace configure_detail {

inline std::string& failure() {
  static std::string reason;
  return reason;
}

inline bp_status fail_init() { return fail(BP_STATUS_INTERNAL, failure()); }

// The core calls these only after init succeeded, which it never does here; a descriptor must
// still have them.
inline bp_status count_no_devices(int32_t* count) {
  *count = 0;
  return BP_STATUS_OK;
}

inline bp_status describe_no_device(int32_t, bp_device_properties*) {
  return fail(BP_STATUS_INVALID_ARGUMENT, failure());
}

}  // namespace configure_detail

// Calls configure(plugin) on a descriptor whose generated fields are set. If it throws, the
// descriptor is reset to those fields without the kernels, and its init fails with
// "configure_plugin failed: <the exception's message>".
template <typename Configure>
void configure_descriptor(bp_plugin& plugin, Configure&& configure) noexcept {
  const bp_plugin generated = plugin;
  std::string reason;
  try {
    configure(plugin);
    return;
  } catch (const std::exception& e) {
    reason = e.what();
  } catch (...) {
    reason = "an exception of unknown type";
  }
  configure_detail::failure() = "configure_plugin failed: " + reason;
  plugin = generated;
  plugin.kernels = nullptr;
  plugin.kernel_count = 0;
  plugin.init = &configure_detail::fail_init;
  plugin.device_count = &configure_detail::count_no_devices;
  plugin.device_properties = &configure_detail::describe_no_device;
}

}  // namespace bp::plugin
