#include "runtime/dlpack_device_type.h"

#include <string_view>

namespace bp::detail {
namespace {

// For plugins that do not say (those built before ABI 1.4, or that leave the field 0), and
// the one place where the core recognises backends by name. A plugin whose devices use host
// memory hands out host addresses, which is what kDLCPU means; other backends are known by the
// names they load under, and those DLPack does not know are kDLExtDev.
DLDeviceType guessed_dlpack_device_type(const bp_plugin& plugin) {
  if (plugin.allocate == nullptr) return kDLCPU;
  const std::string_view name = plugin.name;
  if (name == "cuda") return kDLCUDA;
  if (name == "rocm" || name == "hip") return kDLROCM;
  if (name == "opencl") return kDLOpenCL;
  if (name == "vulkan") return kDLVulkan;
  if (name == "metal") return kDLMetal;
  return kDLExtDev;
}

}  // namespace

DLDeviceType dlpack_device_type_of(const bp_plugin& plugin) {
  if (plugin.dlpack_device_type != 0) return static_cast<DLDeviceType>(plugin.dlpack_device_type);
  return guessed_dlpack_device_type(plugin);
}

}  // namespace bp::detail
