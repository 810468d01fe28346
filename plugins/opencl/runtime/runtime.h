// Every OpenCL device of every platform the ICD loader reports, numbered in platform order
// (opencl:0, opencl:1, ...), found once on first use. Without any platform (no ICD installed,
// OCL_ICD_VENDORS pointing at an empty folder) there are no devices and a reason says why.
#pragma once

#include "runtime/device.h"
#include "runtime/program_cache.h"

#include <backplane/sdk/device_list.hpp>

namespace bp::opencl {

class Runtime {
 public:
  // The process's runtime; discovers the devices on the first call (thread-safe).
  static Runtime& get();

  plugin::DeviceList<Device>& devices() { return devices_; }
  // Throws an Error for an index the plugin does not have, or after shutdown.
  Device& device(int index) { return devices_.at(index); }
  ProgramCache& cache() { return cache_; }

  // Releases every OpenCL object; afterwards device() throws. The core calls it at exit.
  void shut_down();

 private:
  Runtime();

  ProgramCache cache_;
  plugin::DeviceList<Device> devices_{"opencl"};
};

}  // namespace bp::opencl
