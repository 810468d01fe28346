// The loaded backends. Plugins load once, lazily and thread-safely, on first use of the
// registry (or explicitly through bp::load_plugin). Device type 0 is always the host ("cpu");
// a plugin named "cpu" provides its kernels. Other backends get device types in load order.
#pragma once

#include <backplane/abi.h>
#include <backplane/device.h>
#include <backplane/runtime.h>

#include "runtime/environment.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace bp::detail {

// One loaded plugin, with wrappers that turn a non-OK status into a bp::Error carrying the
// plugin's message (ErrorCode::OutOfMemory for BP_STATUS_OUT_OF_MEMORY).
class Backend {
 public:
  virtual ~Backend() = default;
  virtual const PluginInfo& info() const = 0;
  virtual int16_t device_type() const = 0;
  virtual int32_t device_count() const = 0;
  // True when the plugin leaves memory to the core: its device pointers are host addresses.
  virtual bool uses_host_memory() const = 0;
  virtual void* allocate(int32_t device, uint64_t bytes) const = 0;
  virtual void deallocate(int32_t device, void* ptr) const noexcept = 0;
  virtual void copy_host_to_device(int32_t device, void* dst, uint64_t dst_offset,
                                   const void* src, uint64_t bytes) const = 0;
  virtual void copy_device_to_host(int32_t device, void* dst, const void* src,
                                   uint64_t src_offset, uint64_t bytes) const = 0;
  virtual void copy_device_to_device(int32_t device, void* dst, uint64_t dst_offset,
                                     const void* src, uint64_t src_offset,
                                     uint64_t bytes) const = 0;
  virtual void synchronize(int32_t device) const = 0;
  // Events (ABI 1.2). has_events() is false for a plugin without them; calling the other event
  // functions of such a backend is a bug in the core (ErrorCode::Internal).
  virtual bool has_events() const = 0;
  virtual bp_event create_event(int32_t device) const = 0;
  virtual void destroy_event(int32_t device, bp_event event) const noexcept = 0;
  virtual void record_event(int32_t device, bp_event event) const = 0;
  virtual bool event_complete(int32_t device, bp_event event) const = 0;
  virtual void synchronize_event(int32_t device, bp_event event) const = 0;
  virtual double event_elapsed_ms(int32_t device, bp_event start, bp_event end) const = 0;
  // True once the plugin has shut down, at process exit: its kernels have left the dispatch
  // table, and every call into it throws.
  virtual bool has_shut_down() const = 0;
  // The plugin's message for the calling thread's latest failure.
  virtual std::string last_error() const = 0;
  // The plugin's counters as they are now; empty when it reports none.
  virtual std::vector<BackendCounter> counters() const = 0;
};

class Registry {
 public:
  // The process-wide registry, with the plugins chosen by the environment loaded.
  static Registry& get();

  // nullptr for the host when no cpu plugin is loaded.
  virtual const Backend* backend(int16_t device_type) const = 0;
  virtual std::optional<int16_t> device_type_of(std::string_view backend_name) const = 0;
  virtual std::string_view device_type_name(int16_t device_type) const = 0;
  // "cpu, opencl": for messages that list what is available.
  virtual std::string loaded_backend_names() const = 0;
  virtual RuntimeInfo info() const = 0;
  // BACKPLANE_FALLBACK as read when the plugins loaded.
  virtual FallbackPolicy fallback_policy() const = 0;
  // BACKPLANE_DEFAULT_DEVICE as resolved once the plugins loaded; the host when unset.
  virtual Device default_device() const = 0;
  virtual PluginInfo load(const std::string& path) = 0;

 protected:
  ~Registry() = default;
};

// "cuda:1", "cuda" (index 0) or "cpu" against `registry`'s loaded backends; a bp::Error says
// what is wrong with a malformed string, an unknown backend or an index out of range.
Device parse_device(std::string_view spec, const Registry& registry);

// The backend of `device`, or nullptr for the host when no cpu plugin is loaded. A bp::Error,
// naming `what` (the call), unless `device` is a device of a loaded backend: Device(type,
// index) is built from numbers that nothing else checks.
const Backend* backend_of_existing_device(Device device, std::string_view what);

}  // namespace bp::detail
