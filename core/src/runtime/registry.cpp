// The process-wide registry: which plugins loaded, in which device-type slot, and why the
// others did not.
#include "runtime/registry.h"

#include "dispatch/dispatch.h"
#include "dispatch/op_trace.h"
#include "dispatch/validation.h"
#include "memory/caching_allocator.h"
#include "runtime/core_services.h"
#include "runtime/dlpack_device_type.h"
#include "runtime/environment.h"
#include "runtime/plugin_library.h"
#include "runtime/plugin_loader.h"
#include "runtime/plugin_rejected.h"
#include "runtime/plugin_search.h"
#include "runtime/warning_list.h"
#include "support/log.h"

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

const Backend* Registry::backend(int16_t device_type) const {
  if (device_type < 0 || static_cast<size_t>(device_type) >= kMaxDeviceTypes) return nullptr;
  return by_type_[device_type].load(std::memory_order_acquire);
}

std::optional<int16_t> Registry::device_type_of(std::string_view backend_name) const {
  if (backend_name == Device::kHostName) return Device::kHostType;
  const int16_t count = type_count_.load(std::memory_order_acquire);
  for (int16_t type = 1; type < count; ++type) {
    if (type_names_[type] == backend_name) return type;
  }
  return std::nullopt;
}

std::string_view Registry::device_type_name(int16_t device_type) const {
  if (device_type == Device::kHostType) return Device::kHostName;
  if (device_type < 0 || device_type >= type_count_.load(std::memory_order_acquire)) {
    return "unknown";
  }
  return type_names_[device_type];
}

std::string Registry::loaded_backend_names() const {
  std::lock_guard lock(mutex_);
  std::string names;
  for (const Backend* plugin : plugins_in_type_order()) {
    names += fmt::format("{}{}", names.empty() ? "" : ", ", plugin->info().name);
  }
  return names;
}

RuntimeInfo Registry::info() const {
  std::lock_guard lock(mutex_);
  RuntimeInfo info;
  for (const Backend* plugin : plugins_in_type_order()) info.plugins.push_back(plugin->info());
  info.failures = failures_;
  info.warnings = warnings_.all();
  info.kernel_ops.assign(std::begin(kOpNames), std::end(kOpNames));
  info.default_device = default_device_;
  info.validation_findings = validation_findings();
  return info;
}

FallbackPolicy Registry::fallback_policy() const {
  std::lock_guard lock(mutex_);
  return environment_.fallback;
}

PluginInfo Registry::load(const std::string& path) {
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

void Registry::load_from_environment() {
  std::lock_guard lock(mutex_);
  environment_ = read_loader_environment();
  set_log_level(environment_.log_level);
  for (const std::string& warning : environment_.warnings) record_warning(warning);
  if (environment_.trace_path) {
    if (auto failure = start_tracing(*environment_.trace_path)) record_warning(*failure);
  }
  if (environment_.validate != ValidationMode::Off) {
    start_validation(environment_.validate == ValidationMode::Compare, environment_.validate_fatal);
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

void Registry::resolve_default_device() {
  const std::optional<std::string> spec = [&] {
    std::lock_guard lock(mutex_);
    return environment_.default_device;
  }();
  if (!spec) return;
  try {
    default_device_ = parse_device(*spec, *this);
  } catch (const Error& error) {
    std::lock_guard lock(mutex_);
    record_warning(
        fmt::format("BACKPLANE_DEFAULT_DEVICE='{}' names no loaded device, so cpu "
                    "is the default: {}",
                    *spec, error.what()));
  }
}

void Registry::shut_down_plugins() noexcept {
  std::lock_guard lock(mutex_);
  for (auto it = plugins_.rbegin(); it != plugins_.rend(); ++it) {
    clear_kernels((*it)->device_type());
    return_memory_before_shutdown(**it);
    (*it)->shut_down();
  }
}

void Registry::load_candidate(const PluginCandidate& candidate) {
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

const Backend* Registry::load_file(const std::filesystem::path& file, Origin origin,
                                   const std::optional<std::string>& promised) {
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
  if (const Backend* existing = loaded_backend_named(name)) {
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
  install_backend(device_type, dlpack_device_type_of(descriptor), started.kernels);
  const PluginInfo& info = started.backend->info();
  for (const RefusedKernel& refused : info.refused_kernels) {
    log(LogLevel::Warn, "plugin {}: kernel '{}' refused: {}", file.string(), refused.op,
        refused.reason);
  }
  log(LogLevel::Info, "loaded backend '{}' {} from {}: {} device(s), {} of {} ops", name,
      info.version, file.string(), info.devices.size(), info.ops.size(), kOpCount);
  return publish(std::move(started.backend));
}

int16_t Registry::device_type_for(const std::string& name) const {
  if (name == Device::kHostName) return Device::kHostType;
  const int16_t next = type_count_.load(std::memory_order_relaxed);
  if (static_cast<size_t>(next) >= kMaxDeviceTypes) {
    throw PluginRejected(fmt::format(
        "{} backends are loaded already, as many as the dispatch table holds: leave some "
        "out with BACKPLANE_BACKENDS",
        kMaxDeviceTypes));
  }
  return next;
}

const Backend* Registry::publish(std::unique_ptr<Backend> backend) {
  const int16_t type = backend->device_type();
  if (type != Device::kHostType) type_names_[type] = backend->info().name;
  by_type_[type].store(backend.get(), std::memory_order_release);
  if (type != Device::kHostType) type_count_.store(type + 1, std::memory_order_release);
  plugins_.push_back(std::move(backend));
  return plugins_.back().get();
}

const Backend* Registry::loaded_backend_named(std::string_view name) const {
  for (const auto& plugin : plugins_) {
    if (plugin->info().name == name) return plugin.get();
  }
  return nullptr;
}

std::vector<const Backend*> Registry::plugins_in_type_order() const {
  std::vector<const Backend*> ordered;
  for (const auto& plugin : plugins_) ordered.push_back(plugin.get());
  std::sort(ordered.begin(), ordered.end(),
            [](const Backend* a, const Backend* b) { return a->device_type() < b->device_type(); });
  return ordered;
}

void Registry::check_selected_names_exist() {
  for (const std::string& name : environment_.backends.mentioned_names()) {
    if (found_names_.contains(name)) continue;
    const std::string found = found_names_.empty() ? std::string("no plugin was found at all")
                                                   : fmt::format("the plugins found provide: {}",
                                                                 fmt::join(found_names_, ", "));
    record_warning(fmt::format("BACKPLANE_BACKENDS names {}, which no plugin provides; {}",
                               quote_for_message(name), found));
  }
}

void Registry::record_warning(std::string warning) {
  log(LogLevel::Warn, "{}", warning);
  warnings_.add(std::move(warning));
}

void Registry::record_failure(const std::filesystem::path& file, std::string reason,
                              LogLevel level) {
  log(level, "could not load plugin {}: {}", file.string(), reason);
  failures_.push_back({file.string(), std::move(reason)});
}

Registry& Registry::get() {
  // Never destroyed: storages and kernels may still reach backends during static destruction.
  static Registry* const registry = new Registry();
  static std::once_flag loaded;
  std::call_once(loaded, [] {
    registry->load_from_environment();
    registry->resolve_default_device();
    // Registered once loading is done: at exit it runs after the destructors of static objects
    // made later, which may still use the plugins, and before those of objects made earlier.
    std::atexit([] { registry->shut_down_plugins(); });
  });
  return *registry;
}

}  // namespace bp::detail
