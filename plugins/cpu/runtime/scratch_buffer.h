// Temporary host buffers that kernels borrow and give back, so that a kernel called in a loop
// does not map fresh pages (and fault them in) on every call.
#pragma once

#include <cstddef>
#include <memory>

namespace bp::cpu {

// A buffer of at least `bytes` bytes, aligned to 64 bytes, owned until destruction; contents
// are unspecified. Thread-safe: every borrower gets a buffer of its own.
class ScratchBuffer {
 public:
  explicit ScratchBuffer(size_t bytes);
  ~ScratchBuffer();
  ScratchBuffer(const ScratchBuffer&) = delete;
  ScratchBuffer& operator=(const ScratchBuffer&) = delete;

  void* data() const { return block_.get(); }
  template <typename T>
  T* as() const {
    return static_cast<T*>(data());
  }

  struct FreeBlock {
    void operator()(void* block) const;
  };
  using Block = std::unique_ptr<void, FreeBlock>;

 private:
  Block block_;
  size_t capacity_ = 0;
};

}  // namespace bp::cpu
