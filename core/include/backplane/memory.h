// What the caching allocator holds on each device, and giving its cached blocks back. Tensors'
// memory comes in blocks, each its request rounded up to one of four sizes per power of two (at
// least 512 bytes); a block a tensor no longer needs is kept for the next request of its size
// instead of going back to the device, so a steady loop allocates nothing new.
#pragma once

#include <backplane/device.h>

#include <cstdint>

namespace bp {

// One device's numbers since the process started. Byte counts are of blocks.
struct MemoryStats {
  uint64_t allocated_bytes = 0;  // in blocks held by tensors now
  // Taken from the device and not given back: allocated_bytes plus the cached blocks.
  uint64_t reserved_bytes = 0;
  // The most reserved_bytes has been, since the start or reset_peak_memory_stats.
  uint64_t peak_reserved_bytes = 0;
  uint64_t allocations = 0;   // blocks handed to tensors: cache_hits + cache_misses
  uint64_t cache_hits = 0;    // ... that were cached blocks
  uint64_t cache_misses = 0;  // ... that were new blocks from the device
  // Blocks given back to the device (its plugin's deallocate; free for host memory): by
  // empty_cache, by an allocation that ran out of memory, and before the backend shuts down.
  uint64_t device_frees = 0;
};

// The allocator's numbers for `device`; all zero for a device nothing was allocated on yet.
// Throws bp::Error for a device that does not exist.
MemoryStats memory_stats(Device device);

// Gives the cached blocks of `device` back to it, so that other programs (or other libraries of
// this one) can have that memory; blocks held by tensors stay. On the host, the small blocks
// that other threads keep for themselves stay until those threads exit (at most 16 of each size
// up to 16 KiB per thread); the calling thread's go back. Throws bp::Error for a device that
// does not exist.
void empty_cache(Device device);

// Starts peak_reserved_bytes of `device` again from its reserved_bytes now. Throws bp::Error for
// a device that does not exist.
void reset_peak_memory_stats(Device device);

}  // namespace bp
