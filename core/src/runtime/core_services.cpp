#include "runtime/core_services.h"

#include "support/log.h"

#include <backplane/tensor.h>

#include <fmt/format.h>

#include <utility>

namespace bp::detail {
namespace {

LogLevel log_level_of(int32_t level) {
  switch (level) {
    case BP_LOG_ERROR: return LogLevel::Error;
    case BP_LOG_INFO: return LogLevel::Info;
    case BP_LOG_DEBUG: return LogLevel::Debug;
    default: return LogLevel::Warn;
  }
}

// The C function behind bp_core_services::log; its context is the plugin's services.
void log_for_plugin(void* context, int32_t level, const char* message) {
  static_cast<PluginCoreServices*>(context)->report(level, message);
}

// bp_core_services::storage_version: every tensor input the core passes a kernel is the
// dlpack_view() of a TensorImpl.
int32_t storage_version_of_input(void* /*context*/, const DLTensor* tensor, uint64_t* storage,
                                 uint64_t* version) {
  const StorageImpl& memory = *TensorImpl::owner_of_view(*tensor).storage();
  if (!memory.writes_tracked()) return 0;
  *storage = memory.unique_id();
  *version = memory.version();
  return 1;
}

}  // namespace

PluginCoreServices::PluginCoreServices(std::string plugin_name, WarningList& warnings)
    : plugin_name_(std::move(plugin_name)), warnings_(warnings) {
  services_.struct_size = sizeof(bp_core_services);
  services_.context = this;
  services_.log = &log_for_plugin;
  services_.storage_version = &storage_version_of_input;
}

void PluginCoreServices::report(int32_t level, const char* message) noexcept {
  const LogLevel log_level = log_level_of(level);
  // Kept warnings are formatted whatever the level; a message below it costs nothing.
  if (log_level > LogLevel::Warn && !log_enabled(log_level)) return;
  try {
    const std::string text =
        fmt::format("{}: {}", plugin_name_, message != nullptr ? message : "(no message)");
    log(log_level, "{}", text);
    if (log_level > LogLevel::Warn) return;
    const size_t kept = kept_warnings_.fetch_add(1, std::memory_order_relaxed);
    if (kept < kMaxKeptWarnings) {
      warnings_.add(text);
    } else if (kept == kMaxKeptWarnings) {
      warnings_.add(
          fmt::format("{}: more warnings than the {} kept here; BACKPLANE_LOG_LEVEL=warn "
                      "shows them all on stderr",
                      plugin_name_, kMaxKeptWarnings));
    }
  } catch (...) {  // out of memory for the message: it is lost, and the plugin goes on
  }
}

}  // namespace bp::detail
