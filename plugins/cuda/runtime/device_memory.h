// What the caching allocator asks of a device: blocks of memory, given back, and waiting for the
// work queued on it. The CUDA runtime provides it on a GPU; tests provide it from host memory, so
// that the allocator's caching is checked on machines without one.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace bp::cuda {

// Free and total bytes of a device.
struct MemoryInfo {
  uint64_t free = 0;
  uint64_t total = 0;
};

class DeviceMemory {
 public:
  virtual ~DeviceMemory() = default;
  // A block of `bytes`, or null when the device has not that much free. Other failures throw
  // bp::plugin::Error.
  virtual void* allocate(uint64_t bytes) = 0;
  // Gives back a block from allocate(); queued work must be done with it.
  virtual void free(void* block) = 0;
  // Waits until the work queued on the device is done. Throws bp::plugin::Error on failure.
  virtual void synchronize() = 0;
  // The device's memory, where it can be read: for out-of-memory messages.
  virtual std::optional<MemoryInfo> info() = 0;
};

// CUDA device `device` (cudaMalloc, cudaFree, cudaDeviceSynchronize, cudaMemGetInfo), made
// current for each call; `label` names it in errors.
std::unique_ptr<DeviceMemory> cuda_device_memory(int device, std::string label);

}  // namespace bp::cuda
