// The OpenCL devices the core loaded, for the suites that run through the core; a case run
// without any says so and passes.
#pragma once

#include <backplane/backplane.h>

#include <doctest/doctest.h>

#include <vector>

inline std::vector<bp::Device> opencl_devices() {
  std::vector<bp::Device> found;
  for (const bp::Device& device : bp::devices()) {
    if (device.type_name() == "opencl") found.push_back(device);
  }
  return found;
}

#define FOR_EACH_OPENCL_DEVICE(device)                                         \
  const std::vector<bp::Device> devices_ = opencl_devices();                   \
  if (devices_.empty()) MESSAGE("skipped: the opencl backend has no devices"); \
  for (const bp::Device& device : devices_)
