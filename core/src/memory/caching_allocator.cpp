#include "memory/caching_allocator.h"

#include "support/byte_size.h"

#include "runtime/registry.h"

#include <backplane/error.h>

#include <fmt/format.h>

#include <bit>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace bp::detail {
namespace {

// Host blocks start on a cache line, which is also what SIMD loads want.
constexpr size_t kHostAlignment = 64;
constexpr size_t kMinBlockSize = 512;

// Sizes round up to one of four classes per power of two, so a freed block fits later
// requests of nearby sizes while wasting under a quarter of it. Every class is a multiple of
// kHostAlignment, as aligned_alloc requires.
size_t size_class(size_t nbytes) {
  if (nbytes <= kMinBlockSize) return kMinBlockSize;
  const size_t step = std::bit_floor(nbytes) / 4;
  return (nbytes + step - 1) / step * step;
}

// The memory of one device and the blocks it has cached.
struct Pool {
  Device device;
  const Backend* backend = nullptr;  // nullptr: host memory, managed by the core
  std::unordered_map<size_t, std::vector<void*>> free_blocks;  // by size class
  AllocatorStats stats;

  bool uses_host_memory() const { return backend == nullptr; }

  // A new block from the device, or nullptr when the device has no memory left. Other
  // failures of the plugin propagate as its bp::Error.
  void* allocate_fresh(size_t size, std::string& failure) {
    ++stats.device_allocations;
    if (uses_host_memory()) {
      void* ptr = std::aligned_alloc(kHostAlignment, size);
      if (!ptr) failure = "the host's allocator returned no memory";
      return ptr;
    }
    try {
      return backend->allocate(device.index(), size);
    } catch (const Error& e) {
      if (e.code() != ErrorCode::OutOfMemory) throw;
      failure = e.what();
      return nullptr;
    }
  }

  void free_block(void* ptr) const noexcept {
    if (uses_host_memory()) {
      std::free(ptr);
    } else {
      backend->deallocate(device.index(), ptr);
    }
  }

  uint64_t release_cache() noexcept {
    const uint64_t released = stats.cached_bytes;
    for (auto& [size, blocks] : free_blocks) {
      for (void* ptr : blocks) free_block(ptr);
    }
    free_blocks.clear();
    stats.cached_bytes = 0;
    return released;
  }
};

// Host memory needs no plugin, so host tensors work before (or without) any plugin loading.
const Backend* backend_owning_memory(Device device) {
  if (device.is_cpu()) return nullptr;
  const Backend* backend = Registry::get().backend(device.type());
  if (!backend) {
    throw Error(ErrorCode::Internal,
                fmt::format("cannot allocate on device type {}: no backend is loaded for it",
                            device.type()));
  }
  if (device.index() < 0 || device.index() >= backend->device_count()) {
    throw Error(fmt::format("device {} does not exist: {} has {} device(s)", device.str(),
                            device.type_name(), backend->device_count()));
  }
  return backend->uses_host_memory() ? nullptr : backend;
}

uint32_t pool_key(Device device) {
  return (static_cast<uint32_t>(static_cast<uint16_t>(device.type())) << 16) |
         static_cast<uint16_t>(device.index());
}

class CachingAllocator {
 public:
  void* allocate(Device device, size_t nbytes) {
    // Sizes this large cannot be served by any machine, and rounding them would overflow.
    if (nbytes > std::numeric_limits<size_t>::max() / 2) {
      throw out_of_memory(device, nbytes, 0, 0, "the size exceeds any address space");
    }
    const size_t size = size_class(nbytes);
    std::lock_guard lock(mutex_);
    Pool& pool = pool_for(device);
    if (void* ptr = take_cached(pool, size)) return ptr;

    std::string failure;
    void* ptr = pool.allocate_fresh(size, failure);
    uint64_t released = 0;
    if (!ptr) {
      released = release_caches_sharing_memory_with(pool);
      ptr = pool.allocate_fresh(size, failure);
    }
    if (!ptr) throw out_of_memory(device, nbytes, released, pool.stats.allocated_bytes, failure);
    pool.stats.allocated_bytes += size;
    return ptr;
  }

  void release(Device device, void* ptr, size_t nbytes) noexcept {
    const size_t size = size_class(nbytes);
    std::lock_guard lock(mutex_);
    auto it = pools_.find(pool_key(device));
    if (it == pools_.end()) return;  // never handed out by this allocator
    Pool& pool = it->second;
    pool.stats.allocated_bytes -= size;
    try {
      pool.free_blocks[size].push_back(ptr);
      pool.stats.cached_bytes += size;
    } catch (...) {  // no memory to remember the block: give it back instead
      pool.free_block(ptr);
    }
  }

  AllocatorStats stats(Device device) {
    std::lock_guard lock(mutex_);
    auto it = pools_.find(pool_key(device));
    return it == pools_.end() ? AllocatorStats{} : it->second.stats;
  }

  void empty_cache() noexcept {
    std::lock_guard lock(mutex_);
    for (auto& [key, pool] : pools_) pool.release_cache();
  }

 private:
  Pool& pool_for(Device device) {
    auto it = pools_.find(pool_key(device));
    if (it != pools_.end()) return it->second;
    Pool pool;
    pool.device = device;
    pool.backend = backend_owning_memory(device);
    return pools_.emplace(pool_key(device), std::move(pool)).first->second;
  }

  static void* take_cached(Pool& pool, size_t size) {
    auto it = pool.free_blocks.find(size);
    if (it == pool.free_blocks.end() || it->second.empty()) return nullptr;
    void* ptr = it->second.back();
    it->second.pop_back();
    pool.stats.cached_bytes -= size;
    pool.stats.allocated_bytes += size;
    ++pool.stats.cache_hits;
    return ptr;
  }

  // Host-memory pools of every device draw on the same RAM, so all of them give back.
  uint64_t release_caches_sharing_memory_with(Pool& pool) {
    if (!pool.uses_host_memory()) return pool.release_cache();
    uint64_t released = 0;
    for (auto& [key, other] : pools_) {
      if (other.uses_host_memory()) released += other.release_cache();
    }
    return released;
  }

  static Error out_of_memory(Device device, size_t nbytes, uint64_t released, uint64_t in_use,
                             const std::string& failure) {
    return Error(ErrorCode::OutOfMemory,
                 fmt::format("out of memory on {}: could not allocate {} ({} bytes){}; {} held "
                             "by live tensors on that device. Free tensors you no longer need "
                             "(let them go out of scope) or work on smaller pieces. Cause: {}",
                             device.str(), format_bytes(nbytes), nbytes,
                             released ? fmt::format(" even after releasing {} of cached blocks",
                                                    format_bytes(released))
                                      : std::string(),
                             format_bytes(in_use), failure));
  }

  std::mutex mutex_;
  std::unordered_map<uint32_t, Pool> pools_;
};

// Never destroyed: storages released during static destruction still find it.
CachingAllocator& allocator() {
  static auto* instance = new CachingAllocator;
  return *instance;
}

}  // namespace

void* allocate_device_memory(Device device, size_t nbytes) {
  return allocator().allocate(device, nbytes);
}

void release_device_memory(Device device, void* ptr, size_t nbytes) noexcept {
  allocator().release(device, ptr, nbytes);
}

AllocatorStats allocator_stats(Device device) { return allocator().stats(device); }

void empty_allocator_cache() { allocator().empty_cache(); }

}  // namespace bp::detail
