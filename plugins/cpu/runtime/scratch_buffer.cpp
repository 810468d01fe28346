// Scratch buffers (scratch_buffer.h), kept on a process-wide free list for reuse.
#include "runtime/scratch_buffer.h"

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <new>
#include <utility>
#include <vector>

namespace bp::cpu {
namespace {

constexpr size_t kAlignment = 64;
// Buffers kept for reuse: enough for a few user threads calling at once, each with a couple of
// temporaries; a buffer returned beyond that is freed.
constexpr size_t kKeptBuffers = 8;

struct FreeList {
  std::mutex mutex;
  std::vector<std::pair<ScratchBuffer::Block, size_t>> buffers;  // block and its capacity
};

// Never destroyed: a kernel running during exit may still give a buffer back.
FreeList& free_list() {
  static FreeList* const list = new FreeList();
  return *list;
}

ScratchBuffer::Block allocate(size_t bytes) {
  const size_t rounded = std::max(kAlignment, (bytes + kAlignment - 1) / kAlignment * kAlignment);
  void* block = std::aligned_alloc(kAlignment, rounded);
  if (block == nullptr) throw std::bad_alloc();
  return ScratchBuffer::Block(block);
}

}  // namespace

void ScratchBuffer::FreeBlock::operator()(void* block) const { std::free(block); }

// Takes the smallest kept buffer that is large enough; with none, allocates.
ScratchBuffer::ScratchBuffer(size_t bytes) {
  FreeList& list = free_list();
  {
    const std::lock_guard lock(list.mutex);
    auto best = list.buffers.end();
    for (auto it = list.buffers.begin(); it != list.buffers.end(); ++it) {
      if (it->second >= bytes && (best == list.buffers.end() || it->second < best->second))
        best = it;
    }
    if (best != list.buffers.end()) {
      block_ = std::move(best->first);
      capacity_ = best->second;
      list.buffers.erase(best);
      return;
    }
  }
  block_ = allocate(bytes);
  capacity_ = bytes;
}

// Keeps the largest buffers: a later call of the same kernel needs as much again.
ScratchBuffer::~ScratchBuffer() {
  FreeList& list = free_list();
  const std::lock_guard lock(list.mutex);
  list.buffers.emplace_back(std::move(block_), capacity_);
  if (list.buffers.size() > kKeptBuffers) {
    const auto smallest =
        std::min_element(list.buffers.begin(), list.buffers.end(),
                         [](const auto& a, const auto& b) { return a.second < b.second; });
    list.buffers.erase(smallest);
  }
}

}  // namespace bp::cpu
