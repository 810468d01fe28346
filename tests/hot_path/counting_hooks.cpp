#include "counting_hooks.h"

#include <dlfcn.h>
#include <pthread.h>

#include <atomic>
#include <cstdlib>
#include <new>

namespace hotpath {
namespace {

// Plain thread_local integers: reading them allocates nothing and takes no lock, so the hooks
// may use them from anywhere.
thread_local bool t_counting = false;
thread_local int t_allocations = 0;
thread_local int t_locks = 0;

void note_allocation() {
  if (t_counting) ++t_allocations;
}

void note_lock() {
  if (t_counting) ++t_locks;
}

void* allocate(std::size_t size) {
  note_allocation();
  if (void* ptr = std::malloc(size == 0 ? 1 : size)) return ptr;
  throw std::bad_alloc();
}

void* allocate_aligned(std::size_t size, std::align_val_t alignment) {
  note_allocation();
  const auto align = static_cast<std::size_t>(alignment);
  // aligned_alloc wants a size that is a multiple of the alignment.
  const std::size_t rounded = (size + align - 1) / align * align;
  if (void* ptr = std::aligned_alloc(align, rounded == 0 ? align : rounded)) return ptr;
  throw std::bad_alloc();
}

// The C library's own function behind one this program interposes.
template <typename Function>
Function next_definition(std::atomic<Function>& cache, const char* name) {
  Function function = cache.load(std::memory_order_relaxed);
  if (!function) {
    function = reinterpret_cast<Function>(dlsym(RTLD_NEXT, name));
    cache.store(function, std::memory_order_relaxed);
  }
  return function;
}

using MutexLock = int (*)(pthread_mutex_t*);
using RwlockLock = int (*)(pthread_rwlock_t*);
std::atomic<MutexLock> g_mutex_lock{nullptr};
std::atomic<MutexLock> g_mutex_trylock{nullptr};
std::atomic<RwlockLock> g_rwlock_rdlock{nullptr};
std::atomic<RwlockLock> g_rwlock_wrlock{nullptr};

}  // namespace

Counts count_during(const std::function<void()>& body) {
  t_allocations = 0;
  t_locks = 0;
  t_counting = true;
  body();
  t_counting = false;
  return {t_allocations, t_locks};
}

}  // namespace hotpath

void* operator new(std::size_t size) { return hotpath::allocate(size); }
void* operator new[](std::size_t size) { return hotpath::allocate(size); }
void* operator new(std::size_t size, std::align_val_t alignment) {
  return hotpath::allocate_aligned(size, alignment);
}
void* operator new[](std::size_t size, std::align_val_t alignment) {
  return hotpath::allocate_aligned(size, alignment);
}
void operator delete(void* ptr) noexcept { std::free(ptr); }
void operator delete[](void* ptr) noexcept { std::free(ptr); }
void operator delete(void* ptr, std::size_t) noexcept { std::free(ptr); }
void operator delete[](void* ptr, std::size_t) noexcept { std::free(ptr); }
void operator delete(void* ptr, std::align_val_t) noexcept { std::free(ptr); }
void operator delete[](void* ptr, std::align_val_t) noexcept { std::free(ptr); }
void operator delete(void* ptr, std::size_t, std::align_val_t) noexcept { std::free(ptr); }
void operator delete[](void* ptr, std::size_t, std::align_val_t) noexcept { std::free(ptr); }

extern "C" {

int pthread_mutex_lock(pthread_mutex_t* mutex) noexcept {
  hotpath::note_lock();
  return hotpath::next_definition(hotpath::g_mutex_lock, "pthread_mutex_lock")(mutex);
}

int pthread_mutex_trylock(pthread_mutex_t* mutex) noexcept {
  hotpath::note_lock();
  return hotpath::next_definition(hotpath::g_mutex_trylock, "pthread_mutex_trylock")(mutex);
}

int pthread_rwlock_rdlock(pthread_rwlock_t* lock) noexcept {
  hotpath::note_lock();
  return hotpath::next_definition(hotpath::g_rwlock_rdlock, "pthread_rwlock_rdlock")(lock);
}

int pthread_rwlock_wrlock(pthread_rwlock_t* lock) noexcept {
  hotpath::note_lock();
  return hotpath::next_definition(hotpath::g_rwlock_wrlock, "pthread_rwlock_wrlock")(lock);
}

}  // extern "C"
