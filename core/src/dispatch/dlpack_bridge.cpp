#include "dispatch/dlpack_bridge.h"

#include "dispatch/dispatch.h"
#include "runtime/registry.h"

#include <array>
#include <atomic>
#include <string_view>

namespace bp::detail {
namespace {

// DLPack's name for a backend's devices, so that a plugin that checks DLTensor::device sees
// what it expects; backends DLPack does not know are kDLExtDev. Host-memory backends hand out
// host addresses, which is what kDLCPU means.
DLDeviceType dlpack_device_type_of(const Backend& backend) {
  if (backend.uses_host_memory()) return kDLCPU;
  const std::string_view name = backend.info().name;
  if (name == "cuda") return kDLCUDA;
  if (name == "rocm" || name == "hip") return kDLROCM;
  if (name == "opencl") return kDLOpenCL;
  if (name == "vulkan") return kDLVulkan;
  if (name == "metal") return kDLMetal;
  return kDLExtDev;
}

// Computed once per device type, so building a view asks the registry nothing afterwards.
// 0 is no DLDeviceType and marks an entry not yet computed.
std::array<std::atomic<int32_t>, kMaxDeviceTypes> g_dlpack_device_types{};

}  // namespace

DLDeviceType plugin_dlpack_device_type(Device device) {
  std::atomic<int32_t>& cached = g_dlpack_device_types[static_cast<size_t>(device.type())];
  int32_t type = cached.load(std::memory_order_relaxed);
  if (type == 0) {
    const Backend* backend = Registry::get().backend(device.type());
    type = backend ? dlpack_device_type_of(*backend) : kDLExtDev;
    cached.store(type, std::memory_order_relaxed);
  }
  return static_cast<DLDeviceType>(type);
}

DLTensorList::DLTensorList(const std::vector<Tensor>& tensors) {
  views_.reserve(tensors.size());
  for (const Tensor& t : tensors) views_.push_back(to_dlpack_input(t));
}

}  // namespace bp::detail
