// A loaded plugin as the rest of the core sees it: a Backend whose calls check the device
// index and turn a non-OK status into a bp::Error carrying the plugin's message.
#pragma once

#include "runtime/registry.h"

#include <atomic>
#include <string_view>

namespace bp::detail {

class PluginBackend final : public Backend {
 public:
  // `plugin` is the descriptor as accept_descriptor() returned it; the plugin's library stays
  // loaded for the life of the process (the registry never unloads one).
  PluginBackend(const bp_plugin& plugin, PluginInfo info, int16_t device_type);

  const PluginInfo& info() const override { return info_; }
  int16_t device_type() const override { return device_type_; }
  int32_t device_count() const override { return static_cast<int32_t>(info_.devices.size()); }
  bool uses_host_memory() const override { return plugin_.allocate == nullptr; }
  void* allocate(int32_t device, uint64_t bytes) const override;
  void deallocate(int32_t device, void* ptr) const noexcept override;
  void copy_host_to_device(int32_t device, void* dst, uint64_t dst_offset, const void* src,
                           uint64_t bytes) const override;
  void copy_device_to_host(int32_t device, void* dst, const void* src, uint64_t src_offset,
                           uint64_t bytes) const override;
  void copy_device_to_device(int32_t device, void* dst, uint64_t dst_offset, const void* src,
                             uint64_t src_offset, uint64_t bytes) const override;
  void synchronize(int32_t device) const override;
  bool has_events() const override { return plugin_.event_create != nullptr; }
  bp_event create_event(int32_t device) const override;
  void destroy_event(int32_t device, bp_event event) const noexcept override;
  void record_event(int32_t device, bp_event event) const override;
  bool event_complete(int32_t device, bp_event event) const override;
  void synchronize_event(int32_t device, bp_event event) const override;
  double event_elapsed_ms(int32_t device, bp_event start, bp_event end) const override;
  bool has_shut_down() const override { return shut_down_.load(std::memory_order_acquire); }
  std::string last_error() const override;
  std::vector<BackendCounter> counters() const override;

  // Calls the plugin's shutdown once, at process exit. Afterwards deallocate does nothing (the
  // process is about to give all memory back) and every other call throws.
  void shut_down() noexcept;

 private:
  // Throws unless `device` is one of this backend's devices and the plugin is still running.
  void check_callable(int32_t device, std::string_view action) const;
  // check_callable, and a bp::Error (Internal) when the plugin has no events.
  void check_events(int32_t device, std::string_view action) const;
  // Throws a bp::Error naming the backend, the action and the plugin's message.
  void check_status(bp_status status, std::string_view action, int32_t device) const;

  bp_plugin plugin_;
  PluginInfo info_;
  int16_t device_type_;
  std::atomic<bool> shut_down_{false};
};

}  // namespace bp::detail
