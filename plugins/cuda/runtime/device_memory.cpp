#include "runtime/device_memory.h"

#include "kernels/cuda_call.h"
#include "runtime/device_guard.h"

#include <utility>

namespace bp::cuda {
namespace {

class CudaDeviceMemory final : public DeviceMemory {
 public:
  CudaDeviceMemory(int device, std::string label) : device_(device), label_(std::move(label)) {}

  void* allocate(uint64_t bytes) override {
    const DeviceGuard guard(device_);
    void* block = nullptr;
    const cudaError_t error = cudaMalloc(&block, bytes);
    if (error == cudaErrorMemoryAllocation) {
      cudaGetLastError();  // not sticky: clear it
      return nullptr;
    }
    check_cuda(error, label_ + ": cudaMalloc of " + std::to_string(bytes) + " bytes");
    return block;
  }

  void free(void* block) override {
    const DeviceGuard guard(device_);
    cudaFree(block);  // fails only for a bad pointer, and every one came from cudaMalloc
  }

  void synchronize() override {
    const DeviceGuard guard(device_);
    check_cuda(cudaDeviceSynchronize(),
               label_ + ": waiting for queued work before freeing cached blocks");
  }

  std::optional<MemoryInfo> info() override {
    const DeviceGuard guard(device_);
    size_t free_bytes = 0, total_bytes = 0;
    const bool known = cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess;
    cudaGetLastError();
    if (!known) return std::nullopt;
    return MemoryInfo{free_bytes, total_bytes};
  }

 private:
  const int device_;
  const std::string label_;
};

}  // namespace

std::unique_ptr<DeviceMemory> cuda_device_memory(int device, std::string label) {
  return std::make_unique<CudaDeviceMemory>(device, std::move(label));
}

}  // namespace bp::cuda
