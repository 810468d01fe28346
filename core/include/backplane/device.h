// A device: a backend's device type plus an index, written "cuda:1" ("cpu" means "cpu:0").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace bp {

class Device {
 public:
  // The host. It exists whether or not the cpu plugin is loaded: tensors made from host memory
  // live there.
  constexpr Device() = default;
  // Parses "cpu", "cuda", "cuda:1". The type must be a loaded backend's name; otherwise a
  // bp::Error lists the loaded ones. Triggers plugin loading on first use.
  Device(std::string_view spec);  // NOLINT: implicit, so that "cuda:0" reads as a device
  Device(const char* spec) : Device(std::string_view(spec)) {}  // NOLINT
  constexpr Device(int16_t type, int16_t index) : type_(type), index_(index) {}

  static constexpr int16_t kHostType = 0;
  // The host's name in device strings, as PyTorch names it. The plugin of that name provides
  // the host's kernels.
  static constexpr std::string_view kHostName = "cpu";
  static constexpr Device cpu() { return Device(); }

  // Dense id of the backend's device type: 0 is the host ("cpu"), others follow load order.
  constexpr int16_t type() const { return type_; }
  constexpr int16_t index() const { return index_; }
  constexpr bool is_cpu() const { return type_ == kHostType; }
  std::string_view type_name() const;
  std::string str() const;  // "cuda:1"

  friend constexpr bool operator==(Device a, Device b) {
    return a.type_ == b.type_ && a.index_ == b.index_;
  }
  friend constexpr bool operator!=(Device a, Device b) { return !(a == b); }

 private:
  int16_t type_ = kHostType;
  int16_t index_ = 0;
};

// The device that factories (empty, zeros, ones, full, randn, rand, arange, ...) and
// bp::Event use when none is given: BACKPLANE_DEFAULT_DEVICE, resolved once when plugins load,
// else the host. Tensors made from host data (from_blob, from_vector) stay on the host.
Device default_device();

}  // namespace bp
