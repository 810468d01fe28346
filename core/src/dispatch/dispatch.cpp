#include "dispatch/dispatch.h"

#include "dispatch/dlpack_bridge.h"

#include <backplane/error.h>

#include <fmt/format.h>

namespace bp::detail {

constinit DispatchRow g_dispatch_table[kOpCount]{};

void check_device_type(int16_t device_type) {
  if (device_type < 0 || static_cast<size_t>(device_type) >= kMaxDeviceTypes) {
    throw Error(ErrorCode::Internal,
                fmt::format("device type {} is outside the dispatch table, which holds {} device "
                            "types",
                            device_type, kMaxDeviceTypes));
  }
}

void install_backend(int16_t device_type, DLDeviceType dlpack_device_type,
                     std::span<const AcceptedKernel> kernels) {
  check_device_type(device_type);
  set_dlpack_device_type(device_type, dlpack_device_type);
  for (const AcceptedKernel& kernel : kernels) install_kernel(kernel.op, device_type, kernel.fn);
}

void install_kernel(OpId op, int16_t device_type, bp_kernel_fn fn) {
  check_device_type(device_type);
  g_dispatch_table[static_cast<size_t>(op)][device_type].store(fn, std::memory_order_release);
}

void clear_kernels(int16_t device_type) {
  check_device_type(device_type);
  for (DispatchRow& row : g_dispatch_table) {
    row[device_type].store(nullptr, std::memory_order_release);
  }
}

}  // namespace bp::detail
