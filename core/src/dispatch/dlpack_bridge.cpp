#include "dispatch/dlpack_bridge.h"

#include "dispatch/dispatch.h"

#include <array>
#include <atomic>

namespace bp::detail {
namespace {

// Each device type's DLPack device type, as install_backend recorded it. 0 is no
// DLDeviceType: no backend has been installed for that type.
std::array<std::atomic<int32_t>, kMaxDeviceTypes> g_dlpack_device_types{};

}  // namespace

void set_dlpack_device_type(int16_t device_type, DLDeviceType dlpack_device_type) {
  check_device_type(device_type);
  g_dlpack_device_types[static_cast<size_t>(device_type)].store(dlpack_device_type,
                                                                std::memory_order_relaxed);
}

DLDeviceType plugin_dlpack_device_type(Device device) {
  const int32_t type =
      g_dlpack_device_types[static_cast<size_t>(device.type())].load(std::memory_order_relaxed);
  return type == 0 ? kDLExtDev : static_cast<DLDeviceType>(type);
}

DLTensorList::DLTensorList(const std::vector<Tensor>& tensors) {
  views_.reserve(tensors.size());
  for (const Tensor& t : tensors) views_.push_back(to_dlpack_input(t));
}

}  // namespace bp::detail
