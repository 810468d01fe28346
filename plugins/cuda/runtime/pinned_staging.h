// Copies between pageable host memory and one device through a ring of pinned (page-locked)
// host chunks, as the ABI's copy functions promise:
//  - to the device: the source is copied into pinned chunks and the transfers are queued on the
//    device's stream; the call returns once the source has been read, while the last transfers
//    may still run (later work on the stream sees the data);
//  - to the host: transfers are queued a few chunks ahead, and each chunk is copied out as soon
//    as it arrives; the call returns once the destination holds every byte.
// Chunks are allocated on first use. Calls from several threads take turns.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace bp::cuda {

class PinnedStaging {
 public:
  PinnedStaging(int device, std::string label);
  ~PinnedStaging();
  PinnedStaging(const PinnedStaging&) = delete;
  PinnedStaging& operator=(const PinnedStaging&) = delete;

  void to_device(cudaStream_t stream, void* dst, const void* src, uint64_t bytes);
  void to_host(cudaStream_t stream, void* dst, const void* src, uint64_t bytes);
  // Frees the chunks once their transfers are done; later copies allocate them again.
  void release() noexcept;

  static constexpr size_t kChunkBytes = size_t{8} << 20;
  static constexpr size_t kChunks = 4;

 private:
  struct Chunk {
    void* host = nullptr;
    cudaEvent_t transferred = nullptr;  // recorded after the chunk's latest transfer
  };
  // The next chunk of the ring, allocated if new, once its latest transfer has finished.
  Chunk& next_chunk();

  const int device_;
  const std::string label_;
  std::mutex mutex_;
  std::vector<Chunk> chunks_;
  size_t next_ = 0;
};

}  // namespace bp::cuda
