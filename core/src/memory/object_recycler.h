// Memory for the objects behind tensors and storages, recycled by the thread that frees it: a
// loop that makes and drops tensors stops calling malloc and free once each thread holds a few
// spare blocks. TensorImpl and StorageImpl route their operator new and delete here.
#pragma once

#include "memory/per_thread.h"

#include <cstddef>
#include <new>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
// A spare block is poisoned, so that AddressSanitizer still reports a use after free.
#define BP_POISON_SPARE_BLOCK(block, size) ASAN_POISON_MEMORY_REGION(block, size)
#define BP_UNPOISON_SPARE_BLOCK(block, size) ASAN_UNPOISON_MEMORY_REGION(block, size)
#else
#define BP_POISON_SPARE_BLOCK(block, size) ((void)(block), (void)(size))
#define BP_UNPOISON_SPARE_BLOCK(block, size) ((void)(block), (void)(size))
#endif

namespace bp::detail {

// Blocks of kSize bytes; other sizes (a subclass's objects) pass straight to the global
// operator new and delete.
template <size_t kSize>
class ObjectRecycler {
 public:
  static void* allocate(size_t size) {
    if (size == kSize) {
      SpareBlocks* spares = PerThread<SpareBlocks>::get();
      if (spares && spares->count > 0) {
        void* block = spares->blocks[--spares->count];
        BP_UNPOISON_SPARE_BLOCK(block, kSize);
        return block;
      }
    }
    return ::operator new(size);
  }

  static void deallocate(void* block, size_t size) noexcept {
    if (size == kSize) {
      SpareBlocks* spares = PerThread<SpareBlocks>::get();
      if (spares && spares->count < kSparesPerThread) {
        BP_POISON_SPARE_BLOCK(block, kSize);
        spares->blocks[spares->count++] = block;
        return;
      }
    }
    ::operator delete(block, size);
  }

 private:
  // Enough for the temporaries of a few ops in flight at once.
  static constexpr size_t kSparesPerThread = 64;

  struct SpareBlocks {
    SpareBlocks() = default;
    SpareBlocks(const SpareBlocks&) = delete;
    SpareBlocks& operator=(const SpareBlocks&) = delete;
    ~SpareBlocks() {
      while (count > 0) {
        void* block = blocks[--count];
        BP_UNPOISON_SPARE_BLOCK(block, kSize);
        ::operator delete(block, kSize);
      }
    }

    size_t count = 0;
    void* blocks[kSparesPerThread];
  };
};

}  // namespace bp::detail

#undef BP_POISON_SPARE_BLOCK
#undef BP_UNPOISON_SPARE_BLOCK
