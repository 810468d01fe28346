// A loaded plugin as the rest of the core sees it: calls that check the device index and turn
// a non-OK status into a bp::Error carrying the plugin's message (ErrorCode::OutOfMemory for
// BP_STATUS_OUT_OF_MEMORY).
#pragma once

#include <backplane/abi.h>
#include <backplane/runtime.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace bp::detail {

class Backend {
 public:
  // `plugin` is the descriptor as accept_descriptor() returned it; the plugin's library stays
  // loaded for the life of the process (the registry never unloads one).
  Backend(const bp_plugin& plugin, PluginInfo info, int16_t device_type);
  Backend(const Backend&) = delete;
  Backend& operator=(const Backend&) = delete;

  const PluginInfo& info() const { return info_; }
  int16_t device_type() const { return device_type_; }
  int32_t device_count() const { return static_cast<int32_t>(info_.devices.size()); }
  // True when the plugin leaves memory to the core: its device pointers are host addresses.
  bool uses_host_memory() const { return plugin_.allocate == nullptr; }
  void* allocate(int32_t device, uint64_t bytes) const;
  void deallocate(int32_t device, void* ptr) const noexcept;
  void copy_host_to_device(int32_t device, void* dst, uint64_t dst_offset, const void* src,
                           uint64_t bytes) const;
  void copy_device_to_host(int32_t device, void* dst, const void* src, uint64_t src_offset,
                           uint64_t bytes) const;
  void copy_device_to_device(int32_t device, void* dst, uint64_t dst_offset, const void* src,
                             uint64_t src_offset, uint64_t bytes) const;
  void synchronize(int32_t device) const;
  // Events (ABI 1.2). has_events() is false for a plugin without them; calling the other event
  // functions of such a backend is a bug in the core (ErrorCode::Internal).
  bool has_events() const { return plugin_.event_create != nullptr; }
  bp_event create_event(int32_t device) const;
  void destroy_event(int32_t device, bp_event event) const noexcept;
  void record_event(int32_t device, bp_event event) const;
  bool event_complete(int32_t device, bp_event event) const;
  void synchronize_event(int32_t device, bp_event event) const;
  double event_elapsed_ms(int32_t device, bp_event start, bp_event end) const;
  // Collectives on the plugin's memory (ABI 1.6); null for a plugin without them. The calls
  // below check the status as the other calls do.
  const bp_collectives* collectives() const { return plugin_.collectives; }
  std::vector<uint8_t> make_communicator_id() const;
  bp_communicator create_communicator(int32_t device, int32_t rank, int32_t size,
                                      const std::vector<uint8_t>& id) const;
  void destroy_communicator(bp_communicator communicator) const noexcept;
  void all_reduce(bp_communicator communicator, DLTensor* tensor, bp_reduction reduction,
                  int32_t device) const;
  void broadcast(bp_communicator communicator, DLTensor* tensor, int32_t root,
                 int32_t device) const;
  void all_gather(bp_communicator communicator, const DLTensor* input, DLTensor* output,
                  int32_t device) const;
  void reduce_scatter(bp_communicator communicator, const DLTensor* input, DLTensor* output,
                      bp_reduction reduction, int32_t device) const;
  // True once the plugin has shut down, at process exit: its kernels have left the dispatch
  // table, and every call into it throws.
  bool has_shut_down() const { return shut_down_.load(std::memory_order_acquire); }
  // The plugin's message for the calling thread's latest failure.
  std::string last_error() const;
  // The plugin's counters as they are now; empty when it reports none.
  std::vector<BackendCounter> counters() const;

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
