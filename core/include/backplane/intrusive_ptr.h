// A reference-counted pointer whose count lives in the object (Tensor and Storage handles
// copy without a separate control block).
#pragma once

#include <atomic>
#include <cstdint>
#include <utility>

namespace bp {

template <typename T>
class IntrusivePtr;
// A new T with its first reference (counted without an atomic read-modify-write).
template <typename T, typename... Args>
IntrusivePtr<T> make_intrusive(Args&&... args);

class RefCounted {
 public:
  RefCounted() = default;
  RefCounted(const RefCounted&) = delete;
  RefCounted& operator=(const RefCounted&) = delete;
  virtual ~RefCounted() = default;

  void retain() const { refs_.fetch_add(1, std::memory_order_relaxed); }
  void release() const {
    // The holder of the only reference shares the object with no one, so no other thread can
    // be retaining or releasing it: it skips the read-modify-write. The acquire load sees the
    // writes of every thread that released a reference before.
    if (refs_.load(std::memory_order_acquire) == 1 ||
        refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      delete this;
    }
  }
  uint32_t use_count() const { return refs_.load(std::memory_order_relaxed); }

 private:
  template <typename T, typename... Args>
  friend IntrusivePtr<T> make_intrusive(Args&&... args);

  // The first reference to a new object, which no other thread can see yet.
  void adopt_first_reference() const { refs_.store(1, std::memory_order_relaxed); }

  mutable std::atomic<uint32_t> refs_{0};
};

template <typename T>
class IntrusivePtr {
 public:
  IntrusivePtr() = default;
  explicit IntrusivePtr(T* p) : p_(p) {
    if (p_) p_->retain();
  }
  IntrusivePtr(const IntrusivePtr& o) : IntrusivePtr(o.p_) {}
  IntrusivePtr(IntrusivePtr&& o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
  IntrusivePtr& operator=(IntrusivePtr o) noexcept {
    std::swap(p_, o.p_);
    return *this;
  }
  ~IntrusivePtr() {
    if (p_) p_->release();
  }

  T* get() const { return p_; }
  T* operator->() const { return p_; }
  T& operator*() const { return *p_; }
  explicit operator bool() const { return p_ != nullptr; }

 private:
  template <typename U, typename... Args>
  friend IntrusivePtr<U> make_intrusive(Args&&... args);
  struct Adopt {};
  // Takes over a reference the object already counts.
  IntrusivePtr(T* p, Adopt) : p_(p) {}

  T* p_ = nullptr;
};

template <typename T, typename... Args>
IntrusivePtr<T> make_intrusive(Args&&... args) {
  T* object = new T(std::forward<Args>(args)...);
  object->adopt_first_reference();
  return IntrusivePtr<T>(object, typename IntrusivePtr<T>::Adopt{});
}

}  // namespace bp
