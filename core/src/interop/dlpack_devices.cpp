#include "interop/dlpack_devices.h"

#include "dispatch/dispatch.h"
#include "dispatch/dlpack_bridge.h"
#include "runtime/registry.h"

#include <backplane/error.h>

#include <fmt/format.h>

#include <cstring>

namespace bp::detail {
namespace {

std::string_view dlpack_device_type_name(int32_t type) {
  switch (type) {
    case kDLCPU: return "kDLCPU";
    case kDLCUDA: return "kDLCUDA";
    case kDLCUDAHost: return "kDLCUDAHost";
    case kDLOpenCL: return "kDLOpenCL";
    case kDLVulkan: return "kDLVulkan";
    case kDLMetal: return "kDLMetal";
    case kDLVPI: return "kDLVPI";
    case kDLROCM: return "kDLROCM";
    case kDLROCMHost: return "kDLROCMHost";
    case kDLExtDev: return "kDLExtDev";
    case kDLCUDAManaged: return "kDLCUDAManaged";
    default: return {};
  }
}

// Memory the host reaches directly: a producer's pinned host memory is ordinary host memory
// to Backplane.
bool is_host_memory(int32_t type) {
  return type == kDLCPU || type == kDLCUDAHost || type == kDLROCMHost;
}

// "cpu (kDLCPU (1)), opencl (kDLOpenCL (4))": what from_dlpack could have taken.
std::string describe_loaded_backends(const Registry& registry) {
  std::string described;
  for (size_t type = 0; type < kMaxDeviceTypes; ++type) {
    const Backend* backend = registry.backend(static_cast<int16_t>(type));
    if (backend == nullptr) continue;
    const Device device(static_cast<int16_t>(type), 0);
    const DLDeviceType dlpack_type = device.is_cpu() ? kDLCPU : plugin_dlpack_device_type(device);
    described += fmt::format("{}{} ({})", described.empty() ? "" : ", ", backend->info().name,
                             describe_dlpack_device_type(dlpack_type));
  }
  return described.empty() ? "none" : described;
}

}  // namespace

int32_t dlpack_device_type_number(const DLDevice& device) {
  static_assert(sizeof(device.device_type) == sizeof(int32_t), "DLPack stores it as 32 bits");
  int32_t type = 0;
  std::memcpy(&type, &device.device_type, sizeof(type));
  return type;
}

bool dlpack_data_is_address(int32_t type) {
  switch (type) {
    case kDLCPU:
    case kDLCUDA:
    case kDLCUDAHost:
    case kDLCUDAManaged:
    case kDLROCM:
    case kDLROCMHost: return true;
    default: return false;
  }
}

DLDevice exported_dlpack_device(Device device, std::string_view op) {
  if (device.is_cpu()) return {kDLCPU, 0};
  const DLDeviceType type = plugin_dlpack_device_type(device);
  if (type == kDLExtDev) {
    throw Error(fmt::format(
        "{}: {} tensors cannot be shared through DLPack: the plugin does not declare a DLPack "
        "device type; copy to the host first (tensor.cpu())",
        op, device.type_name()));
  }
  // DLPack's host is one device, whichever host-memory backend the tensor is on.
  return {type, type == kDLCPU ? 0 : static_cast<int32_t>(device.index())};
}

Device imported_device(DLDevice device, std::string_view op) {
  const int32_t wanted = dlpack_device_type_number(device);
  if (is_host_memory(wanted)) return Device::cpu();
  const Registry& registry = Registry::get();
  // kDLExtDev says only that DLPack has no name for the memory, not whose it is.
  if (wanted != kDLExtDev) {
    for (size_t type = 1; type < kMaxDeviceTypes; ++type) {
      const Backend* backend = registry.backend(static_cast<int16_t>(type));
      if (backend == nullptr ||
          plugin_dlpack_device_type(Device(static_cast<int16_t>(type), 0)) != wanted) {
        continue;
      }
      if (device.device_id < 0 || device.device_id >= backend->device_count()) {
        throw Error(fmt::format(
            "{}: the DLPack device is {} device {}, but backend {}, which takes that type, has "
            "{} device(s): share a tensor of one of them",
            op, describe_dlpack_device_type(wanted), device.device_id, backend->info().name,
            backend->device_count()));
      }
      return Device(static_cast<int16_t>(type), static_cast<int16_t>(device.device_id));
    }
  }
  throw Error(fmt::format(
      "{}: the DLPack device type {} is no loaded backend's; the host takes kDLCPU, "
      "kDLCUDAHost and kDLROCMHost, and the loaded backends take: {}. Load a plugin for that "
      "device, or copy the data to the host before sharing it",
      op, describe_dlpack_device_type(wanted), describe_loaded_backends(registry)));
}

std::string describe_dlpack_device_type(int32_t type) {
  const std::string_view name = dlpack_device_type_name(type);
  if (name.empty()) return fmt::format("{} (unknown to DLPack 0.6)", type);
  return fmt::format("{} ({})", name, type);
}

}  // namespace bp::detail
