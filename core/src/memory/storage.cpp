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

StorageImpl::~StorageImpl() {
  if (owned_) {
    detail::release_device_memory(device_, data_, nbytes_);
  } else if (release_ != nullptr) {
    release_(release_context_);
  }
}

}  // namespace bp
