// The process-wide registry: which plugins loaded, in which device-type slot, and why the
// others did not.
#include "runtime/registry.h"

#include "dispatch/dispatch.h"
#include "dispatch/op_trace.h"
#include "memory/caching_allocator.h"
#include "runtime/core_services.h"
#include "runtime/environment.h"
#include "runtime/log.h"
#include "runtime/plugin_backend.h"
#include "runtime/plugin_library.h"
#include "runtime/plugin_loader.h"
#include "runtime/plugin_rejected.h"
#include "runtime/plugin_search.h"
#include "runtime/warning_list.h"

#include <backplane/error.h>

#include <boost/dll/shared_library.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>
#include <deque>
#include <exception>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace bp::detail {
namespace {

constexpr std::string_view kHostTypeName = "cpu";

class RegistryImpl final : public Registry {
 public:
  const Backend* backend(int16_t device_type) const override {
    if (device_type < 0 || static_cast<size_t>(device_type) >= kMaxDeviceTypes) return nullptr;
    return by_type_[device_type].load(std::memory_order_acquire);
  }

  std::optional<int16_t> device_type_of(std::string_view backend_name) const override {
    if (backend_name == kHostTypeName) return Device::kHostType;
    const int16_t count = type_count_.load(std::memory_order_acquire);
    for (int16_t type = 1; type < count; ++type) {
      if (type_names_[type] == backend_name) return type;
    }
    return std::nullopt;
  }

  std::string_view device_type_name(int16_t device_type) const override {
    if (device_type == Device::kHostType) return kHostTypeName;
    if (device_type < 0 || device_type >= type_count_.load(std::memory_order_acquire)) {
      return "unknown";
    }
    return type_names_[device_type];
  }

  std::string loaded_backend_names() const override {
    std::lock_guard lock(mutex_);
    std::string names;
    for (const PluginBackend* plugin : plugins_in_type_order()) {
      names += fmt::format("{}{}", names.empty() ? "" : ", ", plugin->info().name);
    }
    return names;
  }

  RuntimeInfo info() const override {
    std::lock_guard lock(mutex_);
    RuntimeInfo info;
    for (const PluginBackend* plugin : plugins_in_type_order()) info.plugins.push_back(plugin->info());
    info.failures = failures_;
    info.warnings = warnings_.all();
    info.kernel_ops.assign(std::begin(kOpNames), std::end(kOpNames));
    info.default_device = default_device_;
    return info;
  }

  FallbackPolicy fallback_policy() const override {
    std::lock_guard lock(mutex_);
    return environment_.fallback;
  }

  // Written once, by resolve_default_device inside Registry::get's call_once, which orders it
  // before every read.
  Device default_device() const override { return default_device_; }

  PluginInfo load(const std::string& path) override {
    std::lock_guard lock(mutex_);
    const std::filesystem::path file = std::filesystem::absolute(path);
    // Loading a file again is a no-op, whichever path names it.
    for (const auto& plugin : plugins_) {
      std::error_code error;
      if (std::filesystem::equivalent(plugin->info().path, file, error)) return plugin->info();
    }
    try {
      return load_file(file, Origin::Explicit)->info();
    } catch (const PluginRejected& rejected) {
      // The caller gets the reason as an exception, so stderr needs it only at info level.
      record_failure(file, rejected.what(), LogLevel::Info);
      throw Error(ErrorCode::Backend,
                  fmt::format("could not load plugin {}: {}", file.string(), rejected.what()));
    }
  }

  void load_from_environment() {
    std::lock_guard lock(mutex_);
    environment_ = read_loader_environment();
    set_log_level(environment_.log_level);
    for (const std::string& warning : environment_.warnings) record_warning(warning);
    if (environment_.trace_path) {
      if (auto failure = start_tracing(*environment_.trace_path)) record_warning(*failure);
    }

    const std::filesystem::path default_folder = default_plugin_folder();
    PluginSearch search = find_plugin_files(environment_.plugin_path, default_folder);
    for (const std::string& warning : search.warnings) record_warning(warning);
    if (!std::filesystem::is_directory(default_folder)) {
      log(LogLevel::Info, "the default plugin folder {} does not exist", default_folder.string());
    }
    for (const PluginCandidate& candidate : search.candidates) load_candidate(candidate);
    check_selected_names_exist();
  }

  // BACKPLANE_DEFAULT_DEVICE against the backends that loaded. Called once loading is done and
  // without the lock: parsing asks this registry for names and device counts, which lock it.
  void resolve_default_device() {
    const std::optional<std::string> spec = [&] {
      std::lock_guard lock(mutex_);
      return environment_.default_device;
    }();
    if (!spec) return;
    try {
      default_device_ = parse_device(*spec, *this);
    } catch (const Error& error) {
      std::lock_guard lock(mutex_);
      record_warning(fmt::format("BACKPLANE_DEFAULT_DEVICE='{}' names no loaded device, so cpu "
                                 "is the default: {}",
                                 *spec, error.what()));
    }
  }

  // In reverse load order. Each backend's kernels leave the dispatch table first, so that an
  // op run later in the exit (by a static destructor) is an error rather than a call into a
  // plugin that has shut down. Then the caching allocator gives the plugin back the memory no
  // tensor holds, so that its shutdown (or a leak checker) sees only what tensors still hold.
  // The libraries stay loaded: their code may still be referenced.
  void shut_down_plugins() noexcept {
    std::lock_guard lock(mutex_);
    for (auto it = plugins_.rbegin(); it != plugins_.rend(); ++it) {
      clear_kernels((*it)->device_type());
      return_memory_before_shutdown(**it);
      (*it)->shut_down();
    }
  }

 private:
  enum class Origin {
    Explicit,     // bp::load_plugin: BACKPLANE_BACKENDS does not apply
    Environment,  // found through BACKPLANE_PLUGIN_PATH or the default folder
  };

  void load_candidate(const PluginCandidate& candidate) {
    const std::filesystem::path& file = candidate.path;
    std::optional<std::string> promised;
    if (!candidate.named_explicitly) {
      promised = backend_name_from_file_name(file);
      found_names_.insert(*promised);
      if (!environment_.backends.allows(*promised)) {
        log(LogLevel::Info, "skipping {}: backend '{}' is not selected by BACKPLANE_BACKENDS={}",
            file.string(), *promised, quote_for_message(*environment_.backends_value));
        return;
      }
    }
    std::error_code error;
    if (!attempted_files_.insert(std::filesystem::weakly_canonical(file, error)).second) {
      log(LogLevel::Debug, "skipping {}: it was already loaded from another path entry",
          file.string());
      return;
    }
    try {
      load_file(file, Origin::Environment, promised);
    } catch (const PluginRejected& rejected) {
      record_failure(file, rejected.what(), LogLevel::Warn);
    } catch (const std::exception& unexpected) {
      // Loading from the environment happens once; one file must not stop the others.
      record_failure(file, fmt::format("loading it failed: {}", unexpected.what()), LogLevel::Warn);
    }
  }

  // Loads one plugin file. Returns nullptr when BACKPLANE_BACKENDS leaves its backend out;
  // throws PluginRejected with the reason when it cannot load. `promised` is the backend a
  // file found in a folder is named after, which BACKPLANE_BACKENDS was checked against.
  const PluginBackend* load_file(const std::filesystem::path& file, Origin origin,
                                 const std::optional<std::string>& promised = std::nullopt) {
    // Every library dlopen accepted stays loaded for the life of the process: a plugin whose
    // code ran may have left behind a thread, an atexit handler or a thread_local destructor
    // that refers to it.
    libraries_.push_back(open_plugin_library(file));
    const bp_plugin descriptor = read_descriptor(libraries_.back());
    const std::string name = descriptor.name;
    found_names_.insert(name);
    if (promised && *promised != name) {
      throw PluginRejected(fmt::format(
          "its file name says backend '{}', but it provides '{}': BACKPLANE_BACKENDS selects "
          "the plugins of a folder by file name, so rename it to libbackplane_{}.so (or name "
          "the file itself in BACKPLANE_PLUGIN_PATH)",
          *promised, name, name));
    }

    if (origin == Origin::Environment && !environment_.backends.allows(name)) {
      log(LogLevel::Info, "skipping {}: backend '{}' is not selected by BACKPLANE_BACKENDS={}",
          file.string(), name, quote_for_message(*environment_.backends_value));
      return nullptr;
    }
    if (const PluginBackend* existing = loaded_backend_named(name)) {
      throw PluginRejected(fmt::format(
          "backend '{}' is already provided by {}: remove one of the two plugins, or select "
          "one with BACKPLANE_BACKENDS or BACKPLANE_PLUGIN_PATH",
          name, existing->info().path));
    }
    const int16_t device_type = device_type_for(name);

    // Kept as long as the library is: the plugin may report through them until the process
    // exits, from threads of its own, also when it fails to start.
    const PluginCoreServices& core_services = core_services_.emplace_back(name, warnings_);
    StartedPlugin started = start_plugin(descriptor, file, device_type, core_services.services());
    for (const AcceptedKernel& kernel : started.kernels) {
      install_kernel(kernel.op, device_type, kernel.fn);
    }
    const PluginInfo& info = started.backend->info();
    for (const RefusedKernel& refused : info.refused_kernels) {
      log(LogLevel::Warn, "plugin {}: kernel '{}' refused: {}", file.string(), refused.op,
          refused.reason);
    }
    log(LogLevel::Info, "loaded backend '{}' {} from {}: {} device(s), {} of {} ops", name,
        info.version, file.string(), info.devices.size(), info.ops.size(), kOpCount);
    return publish(std::move(started.backend));
  }

  // The host type for "cpu"; otherwise the next free type, which publish() then takes.
  int16_t device_type_for(const std::string& name) const {
    if (name == kHostTypeName) return Device::kHostType;
    const int16_t next = type_count_.load(std::memory_order_relaxed);
    if (static_cast<size_t>(next) >= kMaxDeviceTypes) {
      throw PluginRejected(fmt::format(
          "{} backends are loaded already, as many as the dispatch table holds: leave some "
          "out with BACKPLANE_BACKENDS",
          kMaxDeviceTypes));
    }
    return next;
  }

  // Makes the backend visible to lock-free readers: the name first, then the type count.
  const PluginBackend* publish(std::unique_ptr<PluginBackend> backend) {
    const int16_t type = backend->device_type();
    if (type != Device::kHostType) type_names_[type] = backend->info().name;
    by_type_[type].store(backend.get(), std::memory_order_release);
    if (type != Device::kHostType) type_count_.store(type + 1, std::memory_order_release);
    plugins_.push_back(std::move(backend));
    return plugins_.back().get();
  }

  const PluginBackend* loaded_backend_named(std::string_view name) const {
    for (const auto& plugin : plugins_) {
      if (plugin->info().name == name) return plugin.get();
    }
    return nullptr;
  }

  std::vector<const PluginBackend*> plugins_in_type_order() const {
    std::vector<const PluginBackend*> ordered;
    for (const auto& plugin : plugins_) ordered.push_back(plugin.get());
    std::sort(ordered.begin(), ordered.end(), [](const PluginBackend* a, const PluginBackend* b) {
      return a->device_type() < b->device_type();
    });
    return ordered;
  }

  // A name in BACKPLANE_BACKENDS that no plugin has is most likely a typo.
  void check_selected_names_exist() {
    for (const std::string& name : environment_.backends.mentioned_names()) {
      if (found_names_.contains(name)) continue;
      const std::string found =
          found_names_.empty() ? std::string("no plugin was found at all")
                               : fmt::format("the plugins found provide: {}",
                                             fmt::join(found_names_, ", "));
      record_warning(fmt::format("BACKPLANE_BACKENDS names {}, which no plugin provides; {}",
                                 quote_for_message(name), found));
    }
  }

  void record_warning(std::string warning) {
    log(LogLevel::Warn, "{}", warning);
    warnings_.add(std::move(warning));
  }

  void record_failure(const std::filesystem::path& file, std::string reason, LogLevel level) {
    log(level, "could not load plugin {}: {}", file.string(), reason);
    failures_.push_back({file.string(), std::move(reason)});
  }

  mutable std::mutex mutex_;  // guards everything below but the atomics and type_names_
  LoaderEnvironment environment_;
  std::deque<boost::dll::shared_library> libraries_;
  std::vector<std::unique_ptr<PluginBackend>> plugins_;  // in load order
  std::deque<PluginCoreServices> core_services_;  // one per plugin started, never moved
  std::vector<PluginFailure> failures_;
  WarningList warnings_;  // locks itself: plugins report into it from any thread
  std::set<std::filesystem::path> attempted_files_;
  std::set<std::string> found_names_;  // backend names of every plugin seen, loaded or not

  // Read without the lock. type_names_[t] is written before type_count_ grows past t.
  std::array<std::atomic<const PluginBackend*>, kMaxDeviceTypes> by_type_{};
  std::array<std::string, kMaxDeviceTypes> type_names_;
  std::atomic<int16_t> type_count_{1};  // the host type always exists
  Device default_device_;
};

// Never destroyed: storages and kernels may still reach backends during static destruction.
RegistryImpl& registry_instance() {
  static RegistryImpl* const registry = new RegistryImpl();
  return *registry;
}

}  // namespace

Registry& Registry::get() {
  static std::once_flag loaded;
  std::call_once(loaded, [] {
    registry_instance().load_from_environment();
    registry_instance().resolve_default_device();
    // Registered once loading is done: at exit it runs after the destructors of static objects
    // made later, which may still use the plugins, and before those of objects made earlier.
    std::atexit([] {
      finish_tracing();
      registry_instance().shut_down_plugins();
    });
  });
  return registry_instance();
}

}  // namespace bp::detail
