#include <backplane/storage.h>

#include "memory/caching_allocator.h"
#include "memory/object_recycler.h"

namespace bp {

IntrusivePtr<StorageImpl> StorageImpl::allocate(Device device, size_t nbytes) {
  void* data = detail::allocate_device_memory(device, nbytes);
  return make_intrusive<StorageImpl>(device, data, nbytes, /*owned=*/true);
}

IntrusivePtr<StorageImpl> StorageImpl::borrow_host(void* data, size_t nbytes) {
  return make_intrusive<StorageImpl>(Device::cpu(), data, nbytes, /*owned=*/false);
}

IntrusivePtr<StorageImpl> StorageImpl::adopt(Device device, void* data, size_t nbytes,
                                             ReleaseFunction release, void* context) {
  return make_intrusive<StorageImpl>(device, data, nbytes, /*owned=*/false, release, context);
}

void* StorageImpl::operator new(size_t size) {
  return detail::ObjectRecycler<sizeof(StorageImpl)>::allocate(size);
}

void StorageImpl::operator delete(void* ptr, size_t size) noexcept {
  detail::ObjectRecycler<sizeof(StorageImpl)>::deallocate(ptr, size);
}

uint64_t StorageImpl::unique_id() const {
  uint64_t id = unique_id_.load(std::memory_order_acquire);
  if (id != 0) return id;
  static std::atomic<uint64_t> next_id{1};
  const uint64_t fresh = next_id.fetch_add(1, std::memory_order_relaxed);
  // Two threads asking at once agree on whichever id was stored first.
  return unique_id_.compare_exchange_strong(id, fresh, std::memory_order_acq_rel) ? fresh : id;
}

StorageImpl::~StorageImpl() {
  if (owned_) {
    detail::release_device_memory(device_, data_, nbytes_);
  } else if (release_ != nullptr) {
    release_(release_context_);
  }
}

}  // namespace bp
