// Every OpenCL device of every platform the ICD loader reports, numbered in platform order
// (opencl:0, opencl:1, ...), found once on first use. Without any platform (no ICD installed,
// OCL_ICD_VENDORS pointing at an empty folder) there are no devices and a reason says why.
#pragma once

#include "device.h"
#include "program_cache.h"

#include <atomic>
#include <memory>
#include <string>
#include <vector>

namespace bp::opencl {

class Runtime {
 public:
  // The process's runtime; discovers the devices on the first call (thread-safe).
  static Runtime& get();

  int device_count() const { return static_cast<int>(devices_.size()); }
  // Why device_count() is 0 (empty otherwise).
  const std::string& no_devices_reason() const { return no_devices_reason_; }
  // Throws an Error for an index the plugin does not have, or after shutdown.
  Device& device(int index);
  ProgramCache& cache() { return cache_; }

  // Releases every OpenCL object; afterwards device() throws. The core calls it at exit.
  void shutdown();

 private:
  Runtime();

  ProgramCache cache_;
  std::vector<std::unique_ptr<Device>> devices_;
  std::string no_devices_reason_;
  std::atomic<bool> shut_down_{false};
};

}  // namespace bp::opencl
