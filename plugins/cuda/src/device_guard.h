// Makes a CUDA device the calling thread's current one for a scope and restores the previous
// one afterwards, so that the plugin never leaves the host program on another device.
#pragma once

#include "cuda_call.h"

#include <string>

namespace bp::cuda {

class DeviceGuard {
 public:
  explicit DeviceGuard(int device) {
    check_cuda(cudaGetDevice(&previous_), "reading the current CUDA device");
    if (previous_ != device) {
      check_cuda(cudaSetDevice(device), "making CUDA device " + std::to_string(device) + " current");
    }
  }
  ~DeviceGuard() {
    int current = previous_;
    if (cudaGetDevice(&current) == cudaSuccess && current != previous_ && cudaSetDevice(previous_) != cudaSuccess) {
      // A device the process may not use (e.g. in exclusive mode elsewhere): the thread stays on
      // this one, and the failure must not linger as the last error for the next launch check.
      (void)cudaGetLastError();
    }
  }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = 0;
};

}  // namespace bp::cuda
