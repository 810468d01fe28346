// Small host blocks freed by one thread, kept by that thread for its next allocations of the
// same size class. A loop over small host tensors then allocates and frees without taking the
// caching allocator's lock; blocks the cache has no room for go to the shared pool.
//
// Only the owning thread calls take, keep and drain. Its counters are atomics that only the
// owner writes (load and store, no read-modify-write), so that the allocator's statistics can
// read them from any thread.
#pragma once

#include "memory/size_class.h"

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>

namespace bp::detail {

class ThreadBlockCache {
 public:
  // Larger blocks always go through the shared pool: the kernels that fill them take long
  // enough that the lock does not matter, and each thread's hoard stays small (under 2 MiB).
  static constexpr size_t kLargestBlock = 16 * 1024;
  static constexpr size_t kBlocksPerClass = 16;

  static constexpr bool serves(size_t size) { return size <= kLargestBlock; }

  // A kept block of size class `size` (which serves() accepts), or nullptr.
  void* take(size_t size) {
    Slot& slot = slots_[size_class_index(size)];
    if (slot.count == 0) return nullptr;
    add(allocated_bytes_, size);
    add(cache_hits_, 1);
    return slot.blocks[--slot.count];
  }

  // Keeps a freed block of size class `size` (which serves() accepts); false when the cache
  // has no room for it.
  bool keep(void* block, size_t size) {
    Slot& slot = slots_[size_class_index(size)];
    if (slot.count == kBlocksPerClass) return false;
    slot.blocks[slot.count++] = block;
    add(allocated_bytes_, 0 - size);
    return true;
  }

  // Hands every kept block to `give(block, size)` and empties the cache.
  template <typename Give>
  void drain(Give&& give) {
    for (size_t index = 0; index < slots_.size(); ++index) {
      Slot& slot = slots_[index];
      for (; slot.count > 0; --slot.count) give(slot.blocks[slot.count - 1], slot.size);
    }
  }

  // What this cache changed in the host pool's statistics. allocated_bytes is a difference
  // modulo 2^64: a thread that frees more than it allocated has a "negative" count.
  uint64_t allocated_bytes() const { return allocated_bytes_.load(std::memory_order_relaxed); }
  uint64_t cache_hits() const { return cache_hits_.load(std::memory_order_relaxed); }

 private:
  static constexpr size_t kClassCount = size_class_index(kLargestBlock) + 1;

  struct Slot {
    size_t size = 0;
    size_t count = 0;
    std::array<void*, kBlocksPerClass> blocks{};
  };

  static void add(std::atomic<uint64_t>& counter, uint64_t amount) {
    counter.store(counter.load(std::memory_order_relaxed) + amount, std::memory_order_relaxed);
  }

  static constexpr std::array<Slot, kClassCount> make_slots() {
    std::array<Slot, kClassCount> slots{};
    size_t size = kSmallestSizeClass;
    for (Slot& slot : slots) {
      slot.size = size;
      size = size_class(size + 1);
    }
    return slots;
  }

  std::array<Slot, kClassCount> slots_ = make_slots();
  std::atomic<uint64_t> allocated_bytes_{0};
  std::atomic<uint64_t> cache_hits_{0};
};

}  // namespace bp::detail
