// The hot path from a generated op to a kernel: (op id, device type) -> function pointer.
// The table is written while plugins load (under the registry's lock) and read without a lock;
// an empty entry takes the slow path, which loads plugins on first use or reports the miss.
// The dispatcher knows nothing of the loader: the loader hands it each backend's kernels
// through install_backend, and provides the slow path.
#pragma once

#include <backplane/abi.h>
#include <backplane/device.h>
#include <core_generated/OpTable.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>

namespace bp::detail {

inline constexpr size_t kMaxDeviceTypes = 16;

using DispatchRow = std::atomic<bp_kernel_fn>[kMaxDeviceTypes];
// One row per kernel op. Constant-initialised (every entry null) before any code runs, so
// lookups never race with its construction; written only through install_kernel and
// clear_kernels.
extern DispatchRow g_dispatch_table[kOpCount];

// A kernel that the loader accepted from a plugin, for `op`.
struct AcceptedKernel {
  OpId op;
  bp_kernel_fn fn;
};

// How the loader hands a backend to the dispatcher as it loads: each of `kernels` becomes the
// kernel of its op on every device of `device_type`, and the DLPack views of tensors on those
// devices say `dlpack_device_type`. A device type outside the table is a bp::Error.
void install_backend(int16_t device_type, DLDeviceType dlpack_device_type,
                     std::span<const AcceptedKernel> kernels);

// `fn` becomes the kernel of `op` on every device of `device_type`; nullptr removes it.
// clear_kernels removes a device type's whole column (its plugin is shutting down). A device
// type outside the table is a bp::Error.
void install_kernel(OpId op, int16_t device_type, bp_kernel_fn fn);
void clear_kernels(int16_t device_type);

// A bp::Error (ErrorCode::Internal) unless the table has a column for `device_type`.
void check_device_type(int16_t device_type);

// The kernel of `op` on `device` as the table holds it: nullptr until plugins load, and where
// no kernel exists (then kernel_lookup_slow says what to do).
inline bp_kernel_fn kernel_in_table(OpId op, Device device) {
  return g_dispatch_table[static_cast<size_t>(op)][device.type()].load(std::memory_order_acquire);
}

// True when the backend of `device`'s type provides `op`, for composites with a faster path
// through a kernel op that only some backends implement. Plugins have loaded by the time a
// tensor exists on `device`.
inline bool has_kernel(OpId op, Device device) { return kernel_in_table(op, device) != nullptr; }

// The slow path of the generated kernel wrappers. The plugin loader defines both functions
// (runtime/dispatch_slow_path.cpp): only it can load the plugins on first use, and only it knows
// why a backend lacks an op and what a failed kernel's plugin said.

// Loads plugins if nothing has loaded yet and looks again. When no kernel exists: nullptr if
// BACKPLANE_FALLBACK=cpu sends the op to the host (a device other than the host, whose backend
// lacks the op, which the host has; never copy_), else a bp::Error naming the op, the backend
// and what to do.
bp_kernel_fn kernel_lookup_slow(OpId op, Device device);

// Turns a kernel's non-OK status into a bp::Error carrying the plugin's message.
[[noreturn]] void throw_kernel_failure(bp_status status, OpId op, Device device);

inline void check_kernel_status(bp_status status, OpId op, Device device) {
  if (status != BP_STATUS_OK) throw_kernel_failure(status, op, device);
}

}  // namespace bp::detail
