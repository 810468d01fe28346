#include "runtime/backend.h"

#include "support/log.h"
#include "runtime/plugin_call.h"
#include "runtime/plugin_status.h"

#include <backplane/error.h>

#include <fmt/format.h>

#include <cstring>
#include <optional>
#include <string>
#include <utility>

namespace bp::detail {

Backend::Backend(const bp_plugin& plugin, PluginInfo info, int16_t device_type)
    : plugin_(plugin), info_(std::move(info)), device_type_(device_type) {}

void Backend::check_callable(int32_t device, std::string_view action) const {
  if (shut_down_.load(std::memory_order_acquire)) {
    throw Error(ErrorCode::Backend,
                fmt::format("backend '{}' cannot {}: it has shut down because the process is "
                            "exiting",
                            info_.name, action));
  }
  if (device < 0 || device >= device_count()) {
    throw Error(ErrorCode::InvalidArgument,
                fmt::format("backend '{}' cannot {} on device {}: it has {} device(s)", info_.name,
                            action, device, device_count()));
  }
}

void Backend::check_status(bp_status status, std::string_view action, int32_t device) const {
  if (status == BP_STATUS_OK) return;
  std::string message = last_error();
  if (message.empty()) message = "the plugin gave no message";
  throw Error(error_code_for(status),
              fmt::format("backend '{}' could not {} on {}:{} ({}): {}", info_.name, action,
                          info_.name, device, status_description(status), message));
}

void* Backend::allocate(int32_t device, uint64_t bytes) const {
  const std::string action = fmt::format("allocate {} bytes", bytes);
  check_callable(device, action);
  if (uses_host_memory()) {
    throw Error(ErrorCode::Internal,
                fmt::format("backend '{}' leaves memory to the core, so the core allocates its "
                            "host memory itself; asking the plugin to {} is a bug in Backplane",
                            info_.name, action));
  }
  void* ptr = nullptr;
  check_status(plugin_.allocate(device, bytes, &ptr), action, device);
  return ptr;
}

void Backend::deallocate(int32_t device, void* ptr) const noexcept {
  if (uses_host_memory() || shut_down_.load(std::memory_order_acquire)) return;
  // Freeing cannot be reported to anyone: the plugin's message is all there is to say.
  bp_status status = BP_STATUS_OK;
  const std::optional<std::string> escaped =
      call_plugin_noexcept([&] { status = plugin_.deallocate(device, ptr); });
  if (escaped || status != BP_STATUS_OK) {
    log(LogLevel::Warn, "backend '{}' could not free memory on {}:{}: {}", info_.name, info_.name,
        device, escaped ? escaped_exception_reason("deallocate", *escaped) : last_error());
  }
}

void Backend::copy_host_to_device(int32_t device, void* dst, uint64_t dst_offset, const void* src,
                                  uint64_t bytes) const {
  const std::string action = fmt::format("copy {} bytes from the host", bytes);
  check_callable(device, action);
  if (uses_host_memory()) {
    std::memcpy(static_cast<char*>(dst) + dst_offset, src, bytes);
    return;
  }
  check_status(plugin_.copy_host_to_device(device, dst, dst_offset, src, bytes), action, device);
}

void Backend::copy_device_to_host(int32_t device, void* dst, const void* src, uint64_t src_offset,
                                  uint64_t bytes) const {
  const std::string action = fmt::format("copy {} bytes to the host", bytes);
  check_callable(device, action);
  if (uses_host_memory()) {
    std::memcpy(dst, static_cast<const char*>(src) + src_offset, bytes);
    return;
  }
  check_status(plugin_.copy_device_to_host(device, dst, src, src_offset, bytes), action, device);
}

void Backend::copy_device_to_device(int32_t device, void* dst, uint64_t dst_offset, const void* src,
                                    uint64_t src_offset, uint64_t bytes) const {
  const std::string action = fmt::format("copy {} bytes within the device", bytes);
  check_callable(device, action);
  if (uses_host_memory()) {
    std::memmove(static_cast<char*>(dst) + dst_offset, static_cast<const char*>(src) + src_offset,
                 bytes);
    return;
  }
  check_status(plugin_.copy_device_to_device(device, dst, dst_offset, src, src_offset, bytes),
               action, device);
}

void Backend::synchronize(int32_t device) const {
  check_callable(device, "synchronize");
  if (plugin_.synchronize == nullptr) return;  // optional: the plugin runs everything in order
  check_status(plugin_.synchronize(device), "synchronize", device);
}

void Backend::check_events(int32_t device, std::string_view action) const {
  check_callable(device, action);
  if (!has_events()) {
    throw Error(ErrorCode::Internal,
                fmt::format("backend '{}' has no events, so it cannot {}; asking it is a bug in "
                            "Backplane",
                            info_.name, action));
  }
}

bp_event Backend::create_event(int32_t device) const {
  check_events(device, "create an event");
  bp_event event = nullptr;
  check_status(plugin_.event_create(device, &event), "create an event", device);
  return event;
}

void Backend::destroy_event(int32_t device, bp_event event) const noexcept {
  if (!has_events() || shut_down_.load(std::memory_order_acquire)) return;
  bp_status status = BP_STATUS_OK;
  const std::optional<std::string> escaped =
      call_plugin_noexcept([&] { status = plugin_.event_destroy(device, event); });
  if (escaped || status != BP_STATUS_OK) {
    log(LogLevel::Warn, "backend '{}' could not free an event on {}:{}: {}", info_.name, info_.name,
        device, escaped ? escaped_exception_reason("event_destroy", *escaped) : last_error());
  }
}

void Backend::record_event(int32_t device, bp_event event) const {
  check_events(device, "record an event");
  check_status(plugin_.event_record(device, event), "record an event", device);
}

bool Backend::event_complete(int32_t device, bp_event event) const {
  check_events(device, "query an event");
  uint8_t complete = 0;
  check_status(plugin_.event_query(device, event, &complete), "query an event", device);
  return complete != 0;
}

void Backend::synchronize_event(int32_t device, bp_event event) const {
  check_events(device, "wait for an event");
  check_status(plugin_.event_synchronize(device, event), "wait for an event", device);
}

double Backend::event_elapsed_ms(int32_t device, bp_event start, bp_event end) const {
  check_events(device, "time two events");
  double milliseconds = 0;
  check_status(plugin_.event_elapsed(device, start, end, &milliseconds), "time two events", device);
  return milliseconds;
}

std::string Backend::last_error() const {
  const char* message = plugin_.last_error();
  return message ? message : "";
}

std::vector<BackendCounter> Backend::counters() const {
  if (plugin_.read_counters == nullptr) return {};
  if (shut_down_.load(std::memory_order_acquire)) {
    throw Error(ErrorCode::Backend,
                fmt::format("backend '{}' cannot read its counters: it has shut down because the "
                            "process is exiting",
                            info_.name));
  }
  // The plugin may gain counters between calls (a cache that starts on first use): ask again
  // with the room it said it needs until everything fits.
  std::vector<bp_counter> entries;
  int64_t count = 0;
  for (;;) {
    for (bp_counter& entry : entries) entry = bp_counter{sizeof(bp_counter), nullptr, 0};
    const bp_status status = plugin_.read_counters(entries.empty() ? nullptr : entries.data(),
                                                   static_cast<int64_t>(entries.size()), &count);
    if (status != BP_STATUS_OK) {
      throw Error(error_code_for(status),
                  fmt::format("backend '{}' could not read its counters ({}): {}", info_.name,
                              status_description(status), last_error()));
    }
    if (count < 0) {
      throw Error(
          ErrorCode::Backend,
          fmt::format("backend '{}' reported {} counters: a bug in the plugin", info_.name, count));
    }
    if (static_cast<size_t>(count) <= entries.size()) break;
    entries.resize(static_cast<size_t>(count));
  }
  std::vector<BackendCounter> counters;
  counters.reserve(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    const bp_counter& entry = entries[static_cast<size_t>(i)];
    counters.push_back({entry.name ? entry.name : "", entry.value});
  }
  return counters;
}

void Backend::shut_down() noexcept {
  if (shut_down_.exchange(true, std::memory_order_acq_rel)) return;
  if (plugin_.shutdown == nullptr) return;
  if (const std::optional<std::string> escaped =
          call_plugin_noexcept([&] { plugin_.shutdown(); })) {
    log(LogLevel::Warn, "backend '{}' did not shut down cleanly: {}", info_.name,
        escaped_exception_reason("shutdown", *escaped));
  }
}

}  // namespace bp::detail
