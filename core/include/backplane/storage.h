// A block of device memory that tensors view. Freed through the device's caching allocator
// when the last tensor viewing it goes away, unless someone else owns it.
#pragma once

#include <backplane/device.h>
#include <backplane/intrusive_ptr.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace bp {

class StorageImpl : public RefCounted {
 public:
  // Memory the core allocated for `device`; returned to its caching allocator on destruction.
  static IntrusivePtr<StorageImpl> allocate(Device device, size_t nbytes);
  // Host memory the caller owns and keeps alive (bp::from_blob).
  static IntrusivePtr<StorageImpl> borrow_host(void* data, size_t nbytes);
  // Memory of `device` owned elsewhere (a DLPack producer's): `release(context)` runs once,
  // when the last tensor viewing it goes away. It runs in a destructor, so it must not throw.
  using ReleaseFunction = void (*)(void* context);
  static IntrusivePtr<StorageImpl> adopt(Device device, void* data, size_t nbytes,
                                         ReleaseFunction release, void* context);

  ~StorageImpl() override;

  // Every op's output makes one; their memory is recycled by each thread instead of going
  // back to malloc.
  static void* operator new(size_t size);
  static void operator delete(void* ptr, size_t size) noexcept;

  // A device pointer: a host address for the host and host-memory backends, an opaque handle
  // (cl_mem) for others.
  void* data() const { return data_; }
  size_t nbytes() const { return nbytes_; }
  Device device() const { return device_; }
  // Counts writes into this memory through Backplane: every kernel bumps it for the tensors it
  // writes. Autograd's saved tensors compare it to notice that an in-place op overwrote them.
  uint64_t version() const { return version_; }
  void bump_version() { ++version_; }

  // A number that names this storage alone for the process's life (never reused, unlike its
  // address), given on first asking.
  uint64_t unique_id() const;
  // Whether every write into this memory goes through Backplane, and so bumps version(): the
  // core allocated it and never handed its address out (data_ptr(), a DLPack export). Caches of
  // values computed from the contents (packed weights) may key on version() only then.
  bool writes_tracked() const { return owned_ && !address_shared_.load(std::memory_order_relaxed); }
  // From now on, code outside Backplane may write the memory: writes_tracked() is false.
  void share_address() const { address_shared_.store(true, std::memory_order_relaxed); }

 private:
  template <typename T, typename... Args>
  friend IntrusivePtr<T> make_intrusive(Args&&... args);
  StorageImpl(Device device, void* data, size_t nbytes, bool owned,
              ReleaseFunction release = nullptr, void* release_context = nullptr)
      : device_(device),
        data_(data),
        nbytes_(nbytes),
        release_(release),
        release_context_(release_context),
        owned_(owned) {}

  Device device_;
  void* data_;
  size_t nbytes_;
  uint64_t version_ = 0;
  mutable std::atomic<uint64_t> unique_id_{0};  // 0 until unique_id() is first called
  mutable std::atomic<bool> address_shared_{false};
  ReleaseFunction release_;
  void* release_context_;
  bool owned_;  // by the caching allocator
};

}  // namespace bp
