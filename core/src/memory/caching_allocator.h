// Device memory for storages. Freed blocks are kept per (device, size class) and handed out
// again, so that a steady-state loop makes no calls into the plugin's allocate or malloc.
// Small host blocks are first kept by the thread that freed them (memory/thread_block_cache.h),
// so that a loop over small host tensors takes no lock either. bp::memory_stats,
// bp::empty_cache and bp::reset_peak_memory_stats (backplane/memory.h) are its public face.
#pragma once

#include <backplane/device.h>

#include <cstddef>

namespace bp::detail {

class Backend;

// Throws bp::Error (ErrorCode::OutOfMemory) when the device has no memory left, after
// releasing the cache and trying once more.
void* allocate_device_memory(Device device, size_t nbytes);
void release_device_memory(Device device, void* ptr, size_t nbytes) noexcept;

// Called before `backend` shuts down: gives it back every cached block of its memory, so that
// the plugin's shutdown finds no memory that the core holds without using it. Blocks tensors
// release after this are neither cached nor given back: the backend's shutdown owns them.
void return_memory_before_shutdown(const Backend& backend) noexcept;

}  // namespace bp::detail
