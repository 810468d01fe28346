#include <backplane/storage.h>

#include "memory/caching_allocator.h"

namespace bp {

IntrusivePtr<StorageImpl> StorageImpl::allocate(Device device, size_t nbytes) {
  void* data = detail::allocate_device_memory(device, nbytes);
  return IntrusivePtr<StorageImpl>(new StorageImpl(device, data, nbytes, /*owned=*/true));
}

IntrusivePtr<StorageImpl> StorageImpl::borrow_host(void* data, size_t nbytes) {
  return IntrusivePtr<StorageImpl>(new StorageImpl(Device::cpu(), data, nbytes, /*owned=*/false));
}

StorageImpl::~StorageImpl() {
  if (owned_) detail::release_device_memory(device_, data_, nbytes_);
}

}  // namespace bp
