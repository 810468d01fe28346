#include <backplane/device.h>
#include <backplane/error.h>

#include "runtime/registry.h"

#include <fmt/format.h>

#include <charconv>
#include <string>

namespace bp {
namespace {

[[noreturn]] void throw_malformed(std::string_view spec) {
  throw Error(
      fmt::format("invalid device string '{}': expected a backend name with an optional "
                  "index, such as 'cpu', 'cuda' or 'cuda:1'",
                  spec));
}

}  // namespace

namespace detail {
namespace {

// The host exists without a cpu plugin; it then has just the one device.
int64_t device_count_of(const Registry& registry, int16_t type) {
  const Backend* backend = registry.backend(type);
  if (backend != nullptr) return backend->device_count();
  return type == Device::kHostType ? 1 : 0;
}

}  // namespace

Device parse_device(std::string_view spec, const Registry& registry) {
  const size_t colon = spec.find(':');
  const std::string_view name = spec.substr(0, colon);
  int64_t index = 0;
  if (colon != std::string_view::npos) {
    const std::string_view digits = spec.substr(colon + 1);
    const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
    if (digits.empty() || error != std::errc() || end != digits.data() + digits.size() ||
        digits.front() == '-' || digits.front() == '+' ||
        (digits.size() > 1 && digits.front() == '0')) {
      throw_malformed(spec);
    }
  }
  if (name.empty()) throw_malformed(spec);

  const std::optional<int16_t> type = name == Device::kHostName
                                          ? std::optional<int16_t>(Device::kHostType)
                                          : registry.device_type_of(name);
  if (!type) {
    const std::string loaded = registry.loaded_backend_names();
    throw Error(
        fmt::format("unknown device type '{}' in '{}': the loaded backends are {}. A "
                    "backend that failed to load or that BACKPLANE_BACKENDS excludes is "
                    "not available; `bp-info` shows which plugins loaded and why others "
                    "did not",
                    name, spec, loaded.empty() ? "none" : loaded));
  }
  const int64_t count = device_count_of(registry, *type);
  if (index >= count) {
    throw Error(fmt::format(
        "device index {} is out of range in '{}': {} has {}", index, spec, name,
        count == 0 ? std::string("no devices (`bp-info` says why)")
                   : fmt::format("{} device(s), {}:0..{}:{}", count, name, name, count - 1)));
  }
  return Device(*type, static_cast<int16_t>(index));
}

const Backend* backend_of_existing_device(Device device, std::string_view what) {
  const Registry& registry = Registry::get();
  const Backend* backend = registry.backend(device.type());
  const int64_t count = device_count_of(registry, device.type());
  if (device.index() >= 0 && device.index() < count) return backend;
  if (!device.is_cpu() && backend == nullptr) {
    throw Error(
        fmt::format("{}: no backend is loaded for device type {}; make devices from "
                    "strings (bp::Device(\"cuda:0\")), which name the loaded backends",
                    what, device.type()));
  }
  throw Error(fmt::format("{}: device {} does not exist: {} has {} device(s)", what, device.str(),
                          device.type_name(), count));
}

}  // namespace detail

Device::Device(std::string_view spec)
    : Device(detail::parse_device(spec, detail::Registry::get())) {}

Device default_device() { return detail::Registry::get().default_device(); }

std::string_view Device::type_name() const {
  if (is_cpu()) return kHostName;
  return detail::Registry::get().device_type_name(type_);
}

// As PyTorch prints devices: the host is "cpu", other devices carry their index.
std::string Device::str() const {
  if (is_cpu() && index_ == 0) return std::string(kHostName);
  return fmt::format("{}:{}", type_name(), index_);
}

}  // namespace bp
