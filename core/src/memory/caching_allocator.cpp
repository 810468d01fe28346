#include "memory/caching_allocator.h"

#include "memory/per_thread.h"
#include "memory/size_class.h"
#include "memory/thread_block_cache.h"
#include "support/byte_size.h"

#include "dispatch/validation.h"
#include "runtime/backend.h"
#include "runtime/registry.h"

#include <backplane/error.h>
#include <backplane/memory.h>
#include <backplane/storage.h>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace bp::detail {
namespace {

// The memory of one device and the blocks it has cached. Its stats count the shared pool's
// blocks; on the host, threads' caches add their own (ThreadBlockCache).
struct Pool {
  Device device;
  const Backend* backend = nullptr;  // nullptr: host memory, managed by the core
  std::unordered_map<size_t, std::vector<void*>> free_blocks;  // by size class
  MemoryStats stats;
  // Set before the backend shuts down. A block a tensor releases from then on is left to the
  // backend, never handed to its deallocate: another thread may release one while the plugin
  // is inside its shutdown, which nothing orders against that call.
  bool backend_shutting_down = false;
  // The blocks handed out with a guard zone, each with the nbytes asked for it.
  std::unordered_map<void*, size_t> guarded;

  bool uses_host_memory() const { return backend == nullptr; }
  bool makes_guard_zones() const {
    return !uses_host_memory() && g_validating.load(std::memory_order_relaxed);
  }

  // A new block from the device, or nullptr when the device has no memory left. Other
  // failures of the plugin propagate as its bp::Error.
  void* allocate_fresh(size_t size, std::string& failure) {
    void* ptr = nullptr;
    if (uses_host_memory()) {
      ptr = std::aligned_alloc(kHostAlignment, size);
      if (!ptr) failure = "the host's allocator returned no memory";
    } else {
      try {
        ptr = backend->allocate(device.index(), size);
      } catch (const Error& e) {
        if (e.code() != ErrorCode::OutOfMemory) throw;
        failure = e.what();
      }
    }
    if (ptr) {
      ++stats.cache_misses;
      stats.reserved_bytes += size;
      stats.peak_reserved_bytes = std::max(stats.peak_reserved_bytes, stats.reserved_bytes);
    }
    return ptr;
  }

  void free_block(void* ptr, size_t size) noexcept {
    if (uses_host_memory()) {
      std::free(ptr);
    } else {
      backend->deallocate(device.index(), ptr);
    }
    stats.reserved_bytes -= size;
    ++stats.device_frees;
  }

  // Caches a block handed back, or returns it to the device when there is no memory left to
  // remember it; once the backend is shutting down, lets it go.
  void keep(void* ptr, size_t size) noexcept {
    if (backend_shutting_down) {
      stats.reserved_bytes -= size;
      return;
    }
    try {
      free_blocks[size].push_back(ptr);
    } catch (...) {
      free_block(ptr, size);
    }
  }

  uint64_t release_cache() noexcept {
    uint64_t released = 0;
    for (auto& [size, blocks] : free_blocks) {
      for (void* ptr : blocks) free_block(ptr, size);
      released += size * blocks.size();
    }
    free_blocks.clear();
    return released;
  }
};

void fill_guard_zone(const Backend& backend, Device device, void* ptr, size_t nbytes) {
  std::array<unsigned char, kGuardZoneBytes> zone;
  zone.fill(kGuardZoneByte);
  backend.copy_host_to_device(device.index(), ptr, nbytes, zone.data(), zone.size());
}

// Host memory needs no plugin, so host tensors work before (or without) any plugin loading.
const Backend* backend_owning_memory(Device device) {
  if (device == Device::cpu()) return nullptr;
  const Backend* backend = backend_of_existing_device(device, "allocate");
  return backend == nullptr || backend->uses_host_memory() ? nullptr : backend;
}

uint32_t pool_key(Device device) {
  return (static_cast<uint32_t>(static_cast<uint16_t>(device.type())) << 16) |
         static_cast<uint16_t>(device.index());
}

// A thread's block cache, from the thread's first host allocation or release to its exit
// (memory/per_thread.h). At exit its blocks and statistics move to the shared host pool.
struct ThreadCacheOwner {
  ThreadCacheOwner();
  ~ThreadCacheOwner();
  ThreadCacheOwner(const ThreadCacheOwner&) = delete;
  ThreadCacheOwner& operator=(const ThreadCacheOwner&) = delete;

  ThreadBlockCache cache;
  // The allocator's list of live caches, whose statistics it adds up.
  ThreadCacheOwner* previous = nullptr;
  ThreadCacheOwner* next = nullptr;
};

// The calling thread's cache; nullptr once the thread is exiting.
ThreadBlockCache* thread_block_cache() {
  ThreadCacheOwner* owner = PerThread<ThreadCacheOwner>::get();
  return owner ? &owner->cache : nullptr;
}

class CachingAllocator {
 public:
  void* allocate(Device device, size_t nbytes) {
    // Sizes this large cannot be served by any machine, and rounding them would overflow.
    if (nbytes > std::numeric_limits<size_t>::max() / 2) {
      throw out_of_memory(device, nbytes, 0, 0, "the size exceeds any address space");
    }
    const size_t size = size_class(nbytes);
    if (device.is_cpu() && ThreadBlockCache::serves(size)) {
      if (ThreadBlockCache* cache = thread_block_cache()) {
        if (void* ptr = cache->take(size)) return ptr;
      }
    }
    return allocate_from_pool(device, nbytes);
  }

  void release(Device device, void* ptr, size_t nbytes) noexcept {
    const size_t size = size_class(nbytes);
    if (device.is_cpu() && ThreadBlockCache::serves(size)) {
      ThreadBlockCache* cache = thread_block_cache();
      if (cache && cache->keep(ptr, size)) return;
    }
    release_to_pool(device, ptr, nbytes);
  }

  size_t check_guard_zone(const StorageImpl& storage) {
    const Device device = storage.device();
    const Backend* backend = nullptr;
    {
      std::lock_guard lock(mutex_);
      auto it = pools_.find(pool_key(device));
      if (it == pools_.end()) return 0;
      const Pool& pool = it->second;
      const auto guarded = pool.guarded.find(storage.data());
      // An adopted storage may view a block of ours with a size of its own.
      if (guarded == pool.guarded.end() || guarded->second != storage.nbytes()) return 0;
      backend = pool.backend;
    }
    std::array<unsigned char, kGuardZoneBytes> zone;
    backend->copy_device_to_host(device.index(), zone.data(), storage.data(), storage.nbytes(),
                                 zone.size());
    size_t written = zone.size();
    while (written > 0 && zone[written - 1] == kGuardZoneByte) --written;
    if (written > 0) fill_guard_zone(*backend, device, storage.data(), storage.nbytes());
    return written;
  }

  MemoryStats stats(Device device) {
    std::lock_guard lock(mutex_);
    auto it = pools_.find(pool_key(device));
    if (it == pools_.end()) return MemoryStats{};
    MemoryStats stats = it->second.stats;
    if (device.is_cpu()) {
      for (const ThreadCacheOwner* owner = thread_caches_; owner; owner = owner->next) {
        stats.allocated_bytes += owner->cache.allocated_bytes();
        stats.cache_hits += owner->cache.cache_hits();
      }
    }
    stats.allocations = stats.cache_hits + stats.cache_misses;
    return stats;
  }

  void empty_cache(Device device) noexcept {
    std::lock_guard lock(mutex_);
    auto it = pools_.find(pool_key(device));
    if (it == pools_.end()) return;
    Pool& pool = it->second;
    pool.release_cache();
    if (device.is_cpu()) release_calling_thread_cache(pool);
  }

  void reset_peak(Device device) noexcept {
    std::lock_guard lock(mutex_);
    auto it = pools_.find(pool_key(device));
    if (it == pools_.end()) return;
    it->second.stats.peak_reserved_bytes = it->second.stats.reserved_bytes;
  }

  void return_memory_of(const Backend& backend) noexcept {
    std::lock_guard lock(mutex_);
    for (auto& [key, pool] : pools_) {
      if (pool.backend != &backend) continue;
      pool.release_cache();
      pool.backend_shutting_down = true;
    }
  }

  void adopt(ThreadCacheOwner& owner) {
    std::lock_guard lock(mutex_);
    owner.next = thread_caches_;
    if (thread_caches_) thread_caches_->previous = &owner;
    thread_caches_ = &owner;
  }

  void retire(ThreadCacheOwner& owner) noexcept {
    std::lock_guard lock(mutex_);
    (owner.previous ? owner.previous->next : thread_caches_) = owner.next;
    if (owner.next) owner.next->previous = owner.previous;
    // The cache's blocks came from the host pool, so it exists unless the cache is empty.
    const auto it = pools_.find(pool_key(Device::cpu()));
    if (it == pools_.end()) return;
    Pool& host = it->second;
    host.stats.allocated_bytes += owner.cache.allocated_bytes();
    host.stats.cache_hits += owner.cache.cache_hits();
    owner.cache.drain([&](void* ptr, size_t size) { host.keep(ptr, size); });
  }

 private:
  // Out of line, so that the paths of small host blocks above stay small enough to inline.
  [[gnu::noinline]] void* allocate_from_pool(Device device, size_t nbytes) {
    const Backend* guarded = nullptr;  // the backend whose guard zone the block gets
    void* ptr = nullptr;
    {
      std::lock_guard lock(mutex_);
      Pool& pool = pool_for(device);
      if (pool.makes_guard_zones()) guarded = pool.backend;
      const size_t size = size_class(nbytes + (guarded ? kGuardZoneBytes : 0));
      ptr = take_cached(pool, size);
      if (!ptr) ptr = allocate_fresh(pool, size, nbytes);
      if (guarded) pool.guarded[ptr] = nbytes;
    }
    if (guarded) {
      // A block from the cache may have served a storage of another size in the same class.
      try {
        fill_guard_zone(*guarded, device, ptr, nbytes);
      } catch (...) {
        release(device, ptr, nbytes);
        throw;
      }
    }
    return ptr;
  }

  [[gnu::noinline]] void release_to_pool(Device device, void* ptr, size_t nbytes) noexcept {
    std::lock_guard lock(mutex_);
    auto it = pools_.find(pool_key(device));
    if (it == pools_.end()) return;  // never handed out by this allocator
    Pool& pool = it->second;
    size_t block_bytes = nbytes;
    if (!pool.guarded.empty()) {
      if (const auto guarded = pool.guarded.find(ptr); guarded != pool.guarded.end()) {
        block_bytes += kGuardZoneBytes;
        pool.guarded.erase(guarded);
      }
    }
    const size_t size = size_class(block_bytes);
    pool.stats.allocated_bytes -= size;
    pool.keep(ptr, size);
  }

  Pool& pool_for(Device device) {
    auto it = pools_.find(pool_key(device));
    if (it != pools_.end()) return it->second;
    Pool pool;
    pool.device = device;
    pool.backend = backend_owning_memory(device);
    return pools_.emplace(pool_key(device), std::move(pool)).first->second;
  }

  // A new block of `size` bytes for a request of `nbytes`, after releasing cached blocks if
  // need be.
  void* allocate_fresh(Pool& pool, size_t size, size_t nbytes) {
    std::string failure;
    void* ptr = pool.allocate_fresh(size, failure);
    uint64_t released = 0;
    if (!ptr) {
      released = release_caches_sharing_memory_with(pool);
      ptr = pool.allocate_fresh(size, failure);
    }
    if (!ptr)
      throw out_of_memory(pool.device, nbytes, released, pool.stats.allocated_bytes, failure);
    pool.stats.allocated_bytes += size;
    return ptr;
  }

  static void* take_cached(Pool& pool, size_t size) {
    auto it = pool.free_blocks.find(size);
    if (it == pool.free_blocks.end() || it->second.empty()) return nullptr;
    void* ptr = it->second.back();
    it->second.pop_back();
    pool.stats.allocated_bytes += size;
    ++pool.stats.cache_hits;
    return ptr;
  }

  // Other threads' caches are theirs to touch; each holds little (ThreadBlockCache). Their
  // blocks came from `host`, the host's pool.
  static uint64_t release_calling_thread_cache(Pool& host) noexcept {
    uint64_t released = 0;
    // Runs under the lock, so it must not make a cache (which takes the lock to register).
    if (ThreadCacheOwner* owner = PerThread<ThreadCacheOwner>::existing()) {
      owner->cache.drain([&](void* ptr, size_t size) {
        host.free_block(ptr, size);
        released += size;
      });
    }
    return released;
  }

  // Host-memory pools of every device draw on the same RAM, so all of them give back.
  uint64_t release_caches_sharing_memory_with(Pool& pool) {
    if (!pool.uses_host_memory()) return pool.release_cache();
    uint64_t released = 0;
    for (auto& [key, other] : pools_) {
      if (!other.uses_host_memory()) continue;
      released += other.release_cache();
      if (other.device.is_cpu()) released += release_calling_thread_cache(other);
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
  ThreadCacheOwner* thread_caches_ = nullptr;
};

// Never destroyed: storages released during static destruction still find it.
CachingAllocator& allocator() {
  static auto* instance = new CachingAllocator;
  return *instance;
}

ThreadCacheOwner::ThreadCacheOwner() { allocator().adopt(*this); }

ThreadCacheOwner::~ThreadCacheOwner() { allocator().retire(*this); }

}  // namespace

void* allocate_device_memory(Device device, size_t nbytes) {
  return allocator().allocate(device, nbytes);
}

void release_device_memory(Device device, void* ptr, size_t nbytes) noexcept {
  allocator().release(device, ptr, nbytes);
}

void return_memory_before_shutdown(const Backend& backend) noexcept {
  allocator().return_memory_of(backend);
}

size_t check_guard_zone(const StorageImpl& storage) {
  return allocator().check_guard_zone(storage);
}

}  // namespace bp::detail

namespace bp {

MemoryStats memory_stats(Device device) {
  detail::backend_of_existing_device(device, "memory_stats");
  return detail::allocator().stats(device);
}

void empty_cache(Device device) {
  detail::backend_of_existing_device(device, "empty_cache");
  detail::allocator().empty_cache(device);
}

void reset_peak_memory_stats(Device device) {
  detail::backend_of_existing_device(device, "reset_peak_memory_stats");
  detail::allocator().reset_peak(device);
}

}  // namespace bp
