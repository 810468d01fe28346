// Device memory of one GPU, cached: freed blocks are kept in per-size-class free lists and handed
// out again, so that a steady-state loop makes no cudaMalloc (which synchronises the device and
// takes tens of microseconds). When the device runs out, the cache is given back and the
// allocation tried once more; if that fails too, the error says how much was asked for and how
// much the device has free, and the allocator stays usable.
//
// Blocks are reused in the order work reaches the device's one stream: a block freed while
// queued work still uses it goes only to work queued after that work.
#pragma once

#include "runtime/device_memory.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace bp::cuda {

struct MemoryStats {
  uint64_t allocated_bytes = 0;       // in blocks handed out and not yet returned
  uint64_t reserved_bytes = 0;        // in blocks obtained from the device: handed out or cached
  uint64_t peak_allocated_bytes = 0;  // the most allocated_bytes has been
  uint64_t device_allocations = 0;    // blocks obtained from the device (cudaMalloc calls)
  uint64_t cache_hits = 0;            // allocations served from the cache
};

class DeviceAllocator {
 public:
  // Caches blocks of `memory`; `label` names the device in messages ("cuda:0 (NVIDIA H100 80GB
  // HBM3)").
  DeviceAllocator(std::unique_ptr<DeviceMemory> memory, std::string label);
  DeviceAllocator(std::nullptr_t, std::string) = delete;  // an allocator needs memory to cache
  ~DeviceAllocator();
  DeviceAllocator(const DeviceAllocator&) = delete;
  DeviceAllocator& operator=(const DeviceAllocator&) = delete;

  // A block of at least `bytes` bytes (256-byte aligned). Throws bp::plugin::Error with
  // BP_STATUS_OUT_OF_MEMORY when the device cannot provide it even after the cache is released.
  void* allocate(uint64_t bytes);
  // Returns a block from allocate() to the cache. A pointer this allocator did not hand out is
  // refused with BP_STATUS_INVALID_ARGUMENT.
  void release(void* ptr);
  // Frees every cached block (after the device's queued work is done); returns their bytes.
  uint64_t release_cache();
  MemoryStats stats() const;

  // The size of the block that serves `bytes`: multiples of 512 bytes below 1 MiB, of 2 MiB (the
  // granularity cudaMalloc maps large blocks in) from there.
  static uint64_t block_size(uint64_t bytes);

 private:
  uint64_t release_cache_locked();

  const std::unique_ptr<DeviceMemory> memory_;
  const std::string label_;
  mutable std::mutex mutex_;
  std::unordered_map<uint64_t, std::vector<void*>> free_blocks_;  // by block size
  std::unordered_map<void*, uint64_t> live_blocks_;               // handed out: their sizes
  MemoryStats stats_;
};

}  // namespace bp::cuda
