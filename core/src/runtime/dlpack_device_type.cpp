#include "runtime/dlpack_device_type.h"

#include <string_view>

namespace bp::detail {

// The one place where the core recognises backends by name. A plugin whose devices use host
// memory hands out host addresses, which is what kDLCPU means; other backends are known by the
// names they load under, and those DLPack does not know are kDLExtDev.
DLDeviceType dlpack_device_type_of(const bp_plugin& plugin) {
  if (plugin.allocate == nullptr) return kDLCPU;
  const std::string_view name = plugin.name;
  if (name == "cuda") return kDLCUDA;
  if (name == "rocm" || name == "hip") return kDLROCM;
  if (name == "opencl") return kDLOpenCL;
  if (name == "vulkan") return kDLVulkan;
  if (name == "metal") return kDLMetal;
  return kDLExtDev;
}

}  // namespace bp::detail
