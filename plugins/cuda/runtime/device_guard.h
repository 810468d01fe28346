// Makes a CUDA device the calling thread's current one for a scope and restores the previous
// one afterwards, so that the plugin never leaves the host program on another device.
#pragma once

#include "kernels/cuda_call.h"

#include <string>

namespace bp::cuda {

// Whether the calling thread has a current CUDA context: it has made a device current, or used
// one. A thread without one reads device 0 as current, and making device 0 current would create
// that GPU's context (hundreds of MiB) in a program that may never use it. When the driver's
// answer cannot be had, true.
bool thread_has_context();

class DeviceGuard {
 public:
  explicit DeviceGuard(int device) : restore_(thread_has_context()) {
    check_cuda(cudaGetDevice(&previous_), "reading the current CUDA device");
    if (previous_ != device) {
      check_cuda(cudaSetDevice(device),
                 "making CUDA device " + std::to_string(device) + " current");
    }
  }
  // A thread that had no device keeps this one, whose context now exists anyway.
  ~DeviceGuard() {
    if (!restore_) return;
    int current = previous_;
    if (cudaGetDevice(&current) == cudaSuccess && current != previous_ &&
        cudaSetDevice(previous_) != cudaSuccess) {
      // A device the process may not use (e.g. in exclusive mode elsewhere): the thread stays on
      // this one, and the failure must not linger as the last error for the next launch check.
      (void)cudaGetLastError();
    }
  }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  bool restore_;
  int previous_ = 0;
};

}  // namespace bp::cuda
