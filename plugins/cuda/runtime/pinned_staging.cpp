#include "runtime/pinned_staging.h"

#include "kernels/cuda_call.h"
#include "runtime/device_guard.h"

#include <algorithm>
#include <cstring>

namespace bp::cuda {

PinnedStaging::PinnedStaging(int device, std::string label)
    : device_(device), label_(std::move(label)) {
  chunks_.reserve(kChunks);  // in_flight (to_host) holds references into it
}

PinnedStaging::~PinnedStaging() { release(); }

void PinnedStaging::release() noexcept {
  std::lock_guard lock(mutex_);
  for (Chunk& chunk : chunks_) {
    if (chunk.transferred) {
      cudaEventSynchronize(chunk.transferred);
      cudaEventDestroy(chunk.transferred);
    }
    if (chunk.host) cudaFreeHost(chunk.host);
  }
  chunks_.clear();
  next_ = 0;
  cudaGetLastError();  // at exit the driver may be gone already; nothing is left to do about it
}

PinnedStaging::Chunk& PinnedStaging::next_chunk() {
  if (chunks_.size() < kChunks && next_ == chunks_.size()) {
    Chunk chunk;
    check_cuda(cudaMallocHost(&chunk.host, kChunkBytes),
               label_ + ": allocating a pinned staging buffer");
    const cudaError_t error = cudaEventCreateWithFlags(&chunk.transferred, cudaEventDisableTiming);
    if (error != cudaSuccess) cudaFreeHost(chunk.host);
    check_cuda(error, label_ + ": creating an event");
    chunks_.push_back(chunk);
  }
  Chunk& chunk = chunks_[next_];
  next_ = (next_ + 1) % kChunks;
  check_cuda(cudaEventSynchronize(chunk.transferred), label_ + ": waiting for an earlier copy");
  return chunk;
}

void PinnedStaging::to_device(cudaStream_t stream, void* dst, const void* src, uint64_t bytes) {
  std::lock_guard lock(mutex_);
  const DeviceGuard guard(device_);
  for (uint64_t done = 0; done < bytes;) {
    const size_t piece = static_cast<size_t>(std::min<uint64_t>(bytes - done, kChunkBytes));
    Chunk& chunk = next_chunk();
    std::memcpy(chunk.host, static_cast<const char*>(src) + done, piece);
    check_cuda(cudaMemcpyAsync(static_cast<char*>(dst) + done, chunk.host, piece,
                               cudaMemcpyHostToDevice, stream),
               label_ + ": copying " + std::to_string(piece) + " bytes to the device");
    check_cuda(cudaEventRecord(chunk.transferred, stream), label_ + ": recording an event");
    done += piece;
  }
}

void PinnedStaging::to_host(cudaStream_t stream, void* dst, const void* src, uint64_t bytes) {
  std::lock_guard lock(mutex_);
  const DeviceGuard guard(device_);
  struct InFlight {
    Chunk* chunk;
    uint64_t offset;
    size_t size;
  };
  std::vector<InFlight> in_flight;  // oldest first, at most kChunks
  uint64_t queued = 0;
  size_t oldest = 0;
  while (oldest < in_flight.size() || queued < bytes) {
    // Keep every chunk busy: queue transfers until the ring is full.
    while (queued < bytes && in_flight.size() - oldest < kChunks) {
      const size_t piece = static_cast<size_t>(std::min<uint64_t>(bytes - queued, kChunkBytes));
      Chunk& chunk = next_chunk();
      check_cuda(cudaMemcpyAsync(chunk.host, static_cast<const char*>(src) + queued, piece,
                                 cudaMemcpyDeviceToHost, stream),
                 label_ + ": copying " + std::to_string(piece) + " bytes from the device");
      check_cuda(cudaEventRecord(chunk.transferred, stream), label_ + ": recording an event");
      in_flight.push_back({&chunk, queued, piece});
      queued += piece;
    }
    const InFlight& arrived = in_flight[oldest++];
    check_cuda(cudaEventSynchronize(arrived.chunk->transferred),
               label_ + ": waiting for a copy from the device (an earlier kernel may have failed)");
    std::memcpy(static_cast<char*>(dst) + arrived.offset, arrived.chunk->host, arrived.size);
  }
}

}  // namespace bp::cuda
