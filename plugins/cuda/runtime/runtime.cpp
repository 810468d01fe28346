#include "runtime/runtime.h"

#include "kernels/cuda_call.h"

namespace bp::cuda {
namespace {

// "13.0" from 13000.
std::string version_text(int version) {
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

std::string versions_text() {
  int runtime = 0, driver = 0;
  cudaRuntimeGetVersion(&runtime);
  cudaDriverGetVersion(&driver);
  cudaGetLastError();
  return "CUDA runtime " + version_text(runtime) + ", driver " +
         (driver ? version_text(driver) : "none");
}

}  // namespace

Runtime& Runtime::get() {
  // Never destroyed: shut_down() releases CUDA resources while the driver is still there, and
  // late calls (a tensor freed during static destruction) find the runtime shut down rather
  // than destroyed.
  static Runtime* const runtime = new Runtime();
  return *runtime;
}

Runtime::Runtime() {
  int count = 0;
  const cudaError_t error = cudaGetDeviceCount(&count);
  if (error != cudaSuccess) {
    cudaGetLastError();
    devices_.set_none(
        "cudaGetDeviceCount failed: " + cuda_error_text(error) + "; " + versions_text() +
        (error == cudaErrorInsufficientDriver || error == cudaErrorNoDevice
             ? ". On a machine with an NVIDIA GPU, install its driver and check that the "
               "GPU is visible (nvidia-smi, CUDA_VISIBLE_DEVICES)"
             : ""));
    return;
  }
  if (count == 0) {
    devices_.set_none("the CUDA runtime reports no GPU (" + versions_text() + ")");
    return;
  }
  const std::string versions = versions_text();
  for (int index = 0; index < count; ++index) {
    cudaDeviceProp properties{};
    const cudaError_t read = cudaGetDeviceProperties(&properties, index);
    if (read != cudaSuccess) {
      cudaGetLastError();
      // Numbering must stay CUDA's, so one unreadable device leaves the plugin without devices.
      devices_.set_none("cudaGetDeviceProperties for CUDA device " + std::to_string(index) +
                        " failed: " + cuda_error_text(read));
      return;
    }
    devices_.add(std::make_unique<Device>(index, properties, versions));
  }
}

void Runtime::shut_down() {
  // The devices stay allocated: a late call finds the plugin shut down, not a freed device.
  devices_.shut_down([](auto& devices) {
    for (const auto& device : devices) device->shut_down();
  });
}

}  // namespace bp::cuda
