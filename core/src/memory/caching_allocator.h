// Device memory for storages. Freed blocks are kept per (device, size class) and handed out
// again, so that a steady-state loop makes no calls into the plugin's allocate or malloc.
// Small host blocks are first kept by the thread that freed them (memory/thread_block_cache.h),
// so that a loop over small host tensors takes no lock either.
#pragma once

#include <backplane/device.h>

#include <cstddef>
#include <cstdint>

namespace bp::detail {

struct AllocatorStats {
  uint64_t allocated_bytes = 0;  // handed out and not yet returned
  uint64_t cached_bytes = 0;     // returned and kept for reuse, by the pools or by threads
  uint64_t device_allocations = 0;  // calls into the backend's allocate (or aligned_alloc)
  uint64_t cache_hits = 0;
};

// Throws bp::Error (ErrorCode::OutOfMemory) when the device has no memory left, after
// releasing the cache and trying once more.
void* allocate_device_memory(Device device, size_t nbytes);
void release_device_memory(Device device, void* ptr, size_t nbytes) noexcept;
AllocatorStats allocator_stats(Device device);
// Returns every cached block of the shared pools and of the calling thread's cache to its
// backend. Other threads keep their small caches until they exit.
void empty_allocator_cache();

}  // namespace bp::detail
