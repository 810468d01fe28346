#include "runtime/device_allocator.h"

#include <backplane/sdk/status.hpp>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <utility>

namespace bp::cuda {
namespace {

constexpr uint64_t kSmallBlockStep = 512;
constexpr uint64_t kLargeBlockStep = uint64_t{2} << 20;
constexpr uint64_t kLargeBlockFrom = uint64_t{1} << 20;

uint64_t round_up(uint64_t bytes, uint64_t step) { return (bytes + step - 1) / step * step; }

// "268435456 bytes (256.0 MiB)".
std::string bytes_text(uint64_t bytes) {
  char text[64];
  std::snprintf(text, sizeof text, "%" PRIu64 " bytes (%.1f MiB)", bytes,
                static_cast<double>(bytes) / (1 << 20));
  return text;
}

}  // namespace

DeviceAllocator::DeviceAllocator(std::unique_ptr<DeviceMemory> memory, std::string label)
    : memory_(std::move(memory)), label_(std::move(label)) {}

DeviceAllocator::~DeviceAllocator() {
  // Only cached blocks: blocks still handed out belong to tensors that outlive the plugin.
  try {
    release_cache();
  } catch (...) {  // the driver is gone at exit: its memory goes with the process
  }
}

uint64_t DeviceAllocator::block_size(uint64_t bytes) {
  if (bytes == 0) return kSmallBlockStep;
  return bytes < kLargeBlockFrom ? round_up(bytes, kSmallBlockStep)
                                 : round_up(bytes, kLargeBlockStep);
}

void* DeviceAllocator::allocate(uint64_t bytes) {
  if (bytes > UINT64_MAX - kLargeBlockStep) {
    throw plugin::Error(BP_STATUS_OUT_OF_MEMORY, label_ + ": cannot allocate " + bytes_text(bytes) +
                                                     ": no device has that much memory");
  }
  const uint64_t size = block_size(bytes);
  std::lock_guard lock(mutex_);
  if (auto found = free_blocks_.find(size); found != free_blocks_.end() && !found->second.empty()) {
    void* ptr = found->second.back();
    found->second.pop_back();
    // No empty lists stay: an empty cache is an empty map, which release_cache leaves alone.
    if (found->second.empty()) free_blocks_.erase(found);
    live_blocks_.emplace(ptr, size);
    ++stats_.cache_hits;
    stats_.allocated_bytes += size;
    stats_.peak_allocated_bytes = std::max(stats_.peak_allocated_bytes, stats_.allocated_bytes);
    return ptr;
  }

  void* ptr = memory_->allocate(size);
  uint64_t released = 0;
  if (ptr == nullptr) {
    released = release_cache_locked();
    ptr = memory_->allocate(size);
  }
  if (ptr == nullptr) {
    const std::optional<MemoryInfo> info = memory_->info();
    throw plugin::Error(
        BP_STATUS_OUT_OF_MEMORY,
        label_ + ": out of memory: cannot allocate " + bytes_text(bytes) + "; the device has " +
            (info ? bytes_text(info->free) + " free of " + bytes_text(info->total)
                  : std::string("an unknown amount free")) +
            ", of which this plugin holds " + bytes_text(stats_.allocated_bytes) +
            " in live blocks" +
            (released ? " after giving back " + bytes_text(released) + " of cached blocks"
                      : std::string()) +
            ". Free tensors you no longer need or work on smaller pieces.");
  }
  try {
    live_blocks_.emplace(ptr, size);
  } catch (...) {
    memory_->free(ptr);
    throw;
  }
  ++stats_.device_allocations;
  stats_.allocated_bytes += size;
  stats_.reserved_bytes += size;
  stats_.peak_allocated_bytes = std::max(stats_.peak_allocated_bytes, stats_.allocated_bytes);
  return ptr;
}

void DeviceAllocator::release(void* ptr) {
  std::lock_guard lock(mutex_);
  const auto found = live_blocks_.find(ptr);
  if (found == live_blocks_.end()) {
    throw plugin::Error(BP_STATUS_INVALID_ARGUMENT,
                        label_ +
                            ": a pointer that this device's allocator did not hand out was freed");
  }
  const uint64_t size = found->second;
  free_blocks_[size].push_back(ptr);
  live_blocks_.erase(found);
  stats_.allocated_bytes -= size;
}

uint64_t DeviceAllocator::release_cache() {
  std::lock_guard lock(mutex_);
  return release_cache_locked();
}

uint64_t DeviceAllocator::release_cache_locked() {
  if (free_blocks_.empty()) return 0;
  // Queued work may still use freed blocks; giving them back must not pull them from under it.
  memory_->synchronize();
  uint64_t released = 0;
  for (auto& [size, blocks] : free_blocks_) {
    for (void* ptr : blocks) {
      memory_->free(ptr);
      released += size;
    }
  }
  free_blocks_.clear();
  stats_.reserved_bytes -= released;
  return released;
}

MemoryStats DeviceAllocator::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

}  // namespace bp::cuda
