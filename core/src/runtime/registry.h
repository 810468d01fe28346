// The loaded backends. Plugins load once, lazily and thread-safely, on first use of the
// registry (or explicitly through bp::load_plugin). Device type 0 is always the host ("cpu");
// a plugin named "cpu" provides its kernels. Other backends get device types in load order.
#pragma once

#include <backplane/abi.h>
#include <backplane/device.h>
#include <backplane/runtime.h>

#include "dispatch/dispatch.h"
#include "runtime/backend.h"
#include "runtime/core_services.h"
#include "runtime/environment.h"
#include "runtime/plugin_search.h"
#include "runtime/warning_list.h"

#include <boost/dll/shared_library.hpp>

#include <array>
#include <atomic>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace bp::detail {

class Registry {
 public:
  // The process-wide registry, with the plugins chosen by the environment loaded.
  static Registry& get();

  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  // nullptr for the host when no cpu plugin is loaded.
  const Backend* backend(int16_t device_type) const;
  std::optional<int16_t> device_type_of(std::string_view backend_name) const;
  std::string_view device_type_name(int16_t device_type) const;
  // "cpu, opencl": for messages that list what is available.
  std::string loaded_backend_names() const;
  RuntimeInfo info() const;
  // BACKPLANE_FALLBACK as read when the plugins loaded.
  FallbackPolicy fallback_policy() const;
  // BACKPLANE_DEFAULT_DEVICE as resolved once the plugins loaded; the host when unset.
  // Written once, by resolve_default_device inside get()'s call_once, which orders it before
  // every read.
  Device default_device() const { return default_device_; }
  PluginInfo load(const std::string& path);

 private:
  enum class Origin {
    Explicit,     // bp::load_plugin: BACKPLANE_BACKENDS does not apply
    Environment,  // found through BACKPLANE_PLUGIN_PATH or the default folder
  };

  Registry() = default;

  void load_from_environment();
  // BACKPLANE_DEFAULT_DEVICE against the backends that loaded. Called once loading is done and
  // without the lock: parsing asks this registry for names and device counts, which lock it.
  void resolve_default_device();
  // In reverse load order. Each backend's kernels leave the dispatch table first, so that an
  // op run later in the exit (by a static destructor) is an error rather than a call into a
  // plugin that has shut down. Then the caching allocator gives the plugin back the memory no
  // tensor holds, so that its shutdown (or a leak checker) sees only what tensors still hold.
  // The libraries stay loaded: their code may still be referenced.
  void shut_down_plugins() noexcept;

  void load_candidate(const PluginCandidate& candidate);
  // Loads one plugin file. Returns nullptr when BACKPLANE_BACKENDS leaves its backend out;
  // throws PluginRejected with the reason when it cannot load. `promised` is the backend a
  // file found in a folder is named after, which BACKPLANE_BACKENDS was checked against.
  const Backend* load_file(const std::filesystem::path& file, Origin origin,
                           const std::optional<std::string>& promised = std::nullopt);
  // The host type for "cpu"; otherwise the next free type, which publish() then takes.
  int16_t device_type_for(const std::string& name) const;
  // Makes the backend visible to lock-free readers: the name first, then the type count.
  const Backend* publish(std::unique_ptr<Backend> backend);
  const Backend* loaded_backend_named(std::string_view name) const;
  std::vector<const Backend*> plugins_in_type_order() const;
  // A name in BACKPLANE_BACKENDS that no plugin has is most likely a typo.
  void check_selected_names_exist();
  void record_warning(std::string warning);
  void record_failure(const std::filesystem::path& file, std::string reason, LogLevel level);

  mutable std::mutex mutex_;  // guards everything below but the atomics and type_names_
  LoaderEnvironment environment_;
  std::deque<boost::dll::shared_library> libraries_;
  std::vector<std::unique_ptr<Backend>> plugins_;  // in load order
  std::deque<PluginCoreServices> core_services_;   // one per plugin started, never moved
  std::vector<PluginFailure> failures_;
  WarningList warnings_;  // locks itself: plugins report into it from any thread
  std::set<std::filesystem::path> attempted_files_;
  std::set<std::string> found_names_;  // backend names of every plugin seen, loaded or not

  // Read without the lock. type_names_[t] is written before type_count_ grows past t.
  std::array<std::atomic<const Backend*>, kMaxDeviceTypes> by_type_{};
  std::array<std::string, kMaxDeviceTypes> type_names_;
  std::atomic<int16_t> type_count_{1};  // the host type always exists
  Device default_device_;
};

// "cuda:1", "cuda" (index 0) or "cpu" against `registry`'s loaded backends; a bp::Error says
// what is wrong with a malformed string, an unknown backend or an index out of range.
Device parse_device(std::string_view spec, const Registry& registry);

// The backend of `device`, or nullptr for the host when no cpu plugin is loaded. A bp::Error,
// naming `what` (the call), unless `device` is a device of a loaded backend: Device(type,
// index) is built from numbers that nothing else checks.
const Backend* backend_of_existing_device(Device device, std::string_view what);

}  // namespace bp::detail
