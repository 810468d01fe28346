// Every CUDA device the runtime reports, numbered as CUDA numbers them (cuda:N is CUDA device N),
// found once on first use. Without a driver or a GPU there are no devices, and a reason says
// why (cudaGetDeviceCount's error).
#pragma once

#include "device.h"

#include <atomic>
#include <memory>
#include <string>
#include <vector>

namespace bp::cuda {

class Runtime {
 public:
  // The process's runtime; finds the devices on the first call (thread-safe).
  static Runtime& get();

  int device_count() const { return static_cast<int>(devices_.size()); }
  // Why device_count() is 0 (empty otherwise).
  const std::string& no_devices_reason() const { return no_devices_reason_; }
  // Throws bp::plugin::Error for an index the plugin does not have, or after shutdown.
  Device& device(int index);

  // Finishes every device's work and releases what the plugin holds. The core calls it at exit;
  // afterwards device() throws.
  void shut_down();

 private:
  Runtime();

  std::vector<std::unique_ptr<Device>> devices_;
  std::string no_devices_reason_;
  std::atomic<bool> shut_down_{false};
};

}  // namespace bp::cuda
