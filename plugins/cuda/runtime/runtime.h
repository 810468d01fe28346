// Every CUDA device the runtime reports, numbered as CUDA numbers them (cuda:N is CUDA device N),
// found once on first use. Without a driver or a GPU there are no devices, and a reason says
// why (cudaGetDeviceCount's error).
#pragma once

#include "runtime/device.h"

#include <backplane/sdk/device_list.hpp>

namespace bp::cuda {

class Runtime {
 public:
  // The process's runtime; finds the devices on the first call (thread-safe).
  static Runtime& get();

  plugin::DeviceList<Device>& devices() { return devices_; }
  // Throws bp::plugin::Error for an index the plugin does not have, or after shutdown.
  Device& device(int index) { return devices_.at(index); }

  // Finishes every device's work and releases what the plugin holds. The core calls it at exit;
  // afterwards device() throws.
  void shut_down();

 private:
  Runtime();

  plugin::DeviceList<Device> devices_{"cuda"};
};

}  // namespace bp::cuda
