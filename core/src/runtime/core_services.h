// What the core does for a plugin through bp_core_services (ABI 1.3). Each plugin gets services
// of its own, whose context is the plugin's name, so that what it reports is attributed to it.
#pragma once

#include <backplane/abi.h>

#include "runtime/warning_list.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

namespace bp::detail {

class PluginCoreServices {
 public:
  // A plugin that warns without end (on every kernel call, say) must not grow the warnings
  // without end: past this many, its warnings are only logged.
  static constexpr size_t kMaxKeptWarnings = 100;

  // `warnings` must outlive these services, which the plugin may use until the process exits.
  PluginCoreServices(std::string plugin_name, WarningList& warnings);
  PluginCoreServices(const PluginCoreServices&) = delete;
  PluginCoreServices& operator=(const PluginCoreServices&) = delete;

  // What the core hands to the plugin's attach_core.
  const bp_core_services* services() const { return &services_; }

  // bp_core_services::log: "<plugin>: <message>" to the log at `level` (a bp_log_level; other
  // values count as a warning), and into the warnings when it is a warning or an error.
  void report(int32_t level, const char* message) noexcept;

 private:
  const std::string plugin_name_;
  WarningList& warnings_;
  std::atomic<size_t> kept_warnings_{0};
  bp_core_services services_{};
};

}  // namespace bp::detail
