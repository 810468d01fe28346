// Device memory for storages. Freed blocks are kept per (device, size class) and handed out
// again, so that a steady-state loop makes no calls into the plugin's allocate or malloc.
// Small host blocks are first kept by the thread that freed them (memory/thread_block_cache.h),
// so that a loop over small host tensors takes no lock either. bp::memory_stats,
// bp::empty_cache and bp::reset_peak_memory_stats (backplane/memory.h) are its public face.
#pragma once

#include <backplane/device.h>

#include <cstddef>

namespace bp {
class StorageImpl;
}

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

// BACKPLANE_VALIDATE's guard zones. While validation is on, every block of a backend with memory
// of its own is allocated kGuardZoneBytes longer than asked, and those bytes past the storage's
// end, [nbytes, nbytes + kGuardZoneBytes) of the same allocation (device pointers may be opaque
// handles, which cannot be offset), hold kGuardZoneByte, written through the plugin's copy
// functions whenever the block is handed out.
inline constexpr size_t kGuardZoneBytes = 256;
inline constexpr unsigned char kGuardZoneByte = 0xB7;

// How many bytes past the end of `storage` were written, counted to the last guard byte that
// changed; 0 when none did, or the storage has no guard zone (host memory, memory owned
// elsewhere). A changed zone is filled again.
size_t check_guard_zone(const StorageImpl& storage);

}  // namespace bp::detail
