// Reporting warnings and other messages about a plugin through the core (ABI 1.3): the core
// names the plugin, keeps warnings in bp::runtime_info().warnings (and so in bp-info), and
// writes messages to stderr as BACKPLANE_LOG_LEVEL says. A core older than 1.3 never attaches
// itself; then warnings and errors go to stderr in the core's format, and other messages
// nowhere.
#pragma once

#include <backplane/abi.h>

#include <atomic>
#include <cstddef>
#include <cstdio>
#include <string>

namespace bp::plugin {
namespace core_detail {

struct CoreLink {
  std::atomic<const bp_core_services*> services{nullptr};
  std::atomic<const char*> plugin_name{nullptr};  // for the messages written without the core
};

// Plugins are built with hidden visibility, so each plugin has its own.
inline CoreLink& core_link() {
  static CoreLink link;
  return link;
}

// The descriptor's attach_core. NULL, which no core passes, detaches the core.
inline void attach_core(const bp_core_services* services) {
  core_link().services.store(services, std::memory_order_release);
}

inline const char* level_name(bp_log_level level) {
  switch (level) {
    case BP_LOG_ERROR: return "error";
    case BP_LOG_WARN: return "warn";
    case BP_LOG_INFO: return "info";
    case BP_LOG_DEBUG: return "debug";
  }
  return "warn";
}

// The core's log function, or NULL when no core attached itself or it has none.
inline const bp_core_services* core_with_log() {
  const bp_core_services* core = core_link().services.load(std::memory_order_acquire);
  if (core == nullptr) return nullptr;
  const bool has_log = offsetof(bp_core_services, log) + sizeof(core->log) <= core->struct_size;
  return has_log && core->log != nullptr ? core : nullptr;
}

}  // namespace core_detail

// Lets the core attach itself to `plugin` (sets its attach_core), and names the plugin in the
// messages this plugin writes itself when the core does not. The generated entry point calls
// it; a hand-written descriptor calls it once its name is set.
inline void connect_to_core(bp_plugin& plugin) {
  core_detail::core_link().plugin_name.store(plugin.name, std::memory_order_relaxed);
  plugin.attach_core = &core_detail::attach_core;
}

// Reports `message` about this plugin at `level`, from any thread: through the core when one
// attached itself, else on stderr for warnings and errors. Never throws.
inline void log_message(bp_log_level level, const std::string& message) noexcept {
  if (const bp_core_services* core = core_detail::core_with_log()) {
    core->log(core->context, level, message.c_str());
    return;
  }
  if (level != BP_LOG_ERROR && level != BP_LOG_WARN) return;
  try {
    const char* name = core_detail::core_link().plugin_name.load(std::memory_order_relaxed);
    const std::string line = std::string("[backplane] ") + core_detail::level_name(level) + ": " +
                             (name != nullptr ? std::string(name) + ": " : std::string()) +
                             message + "\n";
    // One write per line, so that lines from several threads do not interleave.
    std::fwrite(line.data(), 1, line.size(), stderr);
  } catch (...) {  // out of memory for the line: the warning is lost, the caller goes on
  }
}

// A value the plugin cannot use, a cache it cannot write: what its user should know and fix.
inline void warn(const std::string& message) noexcept { log_message(BP_LOG_WARN, message); }

}  // namespace bp::plugin
