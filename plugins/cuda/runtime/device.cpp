#include "runtime/device.h"

#include "kernels/cuda_call.h"
#include "runtime/device_guard.h"
#include "runtime/environment.h"

#include <cstdio>

namespace bp::cuda {
namespace {

std::string gibibytes(uint64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f GiB", static_cast<double>(bytes) / (uint64_t{1} << 30));
  return text;
}

}  // namespace

Device::Device(int index, const cudaDeviceProp& properties, const std::string& versions)
    : index_(index),
      name_(properties.name),
      label_("cuda:" + std::to_string(index) + " (" + name_ + ")"),
      total_memory_(properties.totalGlobalMem),
      multiprocessors_(properties.multiProcessorCount > 0 ? properties.multiProcessorCount : 1),
      max_shared_memory_(properties.sharedMemPerBlockOptin),
      allocator_(cuda_device_memory(index, label_), label_),
      staging_(index, label_) {
  description_ = "compute capability " + std::to_string(properties.major) + "." +
                 std::to_string(properties.minor) + ", " +
                 std::to_string(properties.multiProcessorCount) + " multiprocessors, " +
                 gibibytes(total_memory_) + "; " + versions +
                 "; TF32 for float32 matrix products: " + (tf32_allowed() ? "on" : "off") +
                 " (BACKPLANE_CUDA_ALLOW_TF32)";
  const std::string prefix = "cuda" + std::to_string(index) + ".memory.";
  const std::string conv = "cuda" + std::to_string(index) + ".conv2d.";
  counter_names_ = {prefix + "allocated_bytes",      prefix + "reserved_bytes",
                    prefix + "peak_allocated_bytes", prefix + "cuda_malloc_calls",
                    prefix + "cache_hits",           conv + "cudnn_runs",
                    conv + "cudnn_algorithm",        conv + "cudnn_nhwc"};
}

std::array<plugin::CounterValue, Device::kCounterCount> Device::counters() const {
  const MemoryStats stats = allocator_.stats();
  return {{{counter_names_[0].c_str(), stats.allocated_bytes},
           {counter_names_[1].c_str(), stats.reserved_bytes},
           {counter_names_[2].c_str(), stats.peak_allocated_bytes},
           {counter_names_[3].c_str(), stats.device_allocations},
           {counter_names_[4].c_str(), stats.cache_hits},
           {counter_names_[5].c_str(), cudnn_forward_runs_.load(std::memory_order_relaxed)},
           {counter_names_[6].c_str(), cudnn_forward_algorithm_.load(std::memory_order_relaxed)},
           {counter_names_[7].c_str(), cudnn_forward_nhwc_.load(std::memory_order_relaxed)}}};
}

void Device::count_cudnn_forward(int algorithm, bool channels_last) {
  cudnn_forward_algorithm_.store(static_cast<uint64_t>(algorithm), std::memory_order_relaxed);
  cudnn_forward_nhwc_.store(channels_last ? 1 : 0, std::memory_order_relaxed);
  cudnn_forward_runs_.fetch_add(1, std::memory_order_relaxed);
}

cudaStream_t Device::stream() {
  std::call_once(stream_created_, [this] {
    const DeviceGuard guard(index_);
    cudaStream_t created = nullptr;
    check_cuda(cudaStreamCreateWithFlags(&created, cudaStreamNonBlocking),
               label_ + ": creating a stream");
    stream_.store(created, std::memory_order_release);
  });
  return stream_.load(std::memory_order_acquire);
}

LaunchTarget Device::launch_target() {
  LaunchTarget target;
  target.stream = stream();
  target.multiprocessors = multiprocessors_;
  target.max_shared_memory = max_shared_memory_;
  return target;
}

Blas& Device::blas() {
  std::call_once(blas_created_,
                 [this] { blas_ = std::make_unique<Blas>(index_, label_, allocator_); });
  return *blas_;
}

uint32_t* Device::zeroed_counters(int64_t count) {
  std::lock_guard lock(counters_mutex_);
  if (count <= counter_count_) return counters_;
  const auto bytes = static_cast<uint64_t>(count) * sizeof(uint32_t);
  auto* counters = static_cast<uint32_t*>(allocator_.allocate(bytes));
  const DeviceGuard guard(index_);
  const cudaError_t zeroed = cudaMemsetAsync(counters, 0, bytes, stream());
  if (zeroed != cudaSuccess) allocator_.release(counters);
  check_cuda(zeroed, label_ + ": zeroing reduction counters");
  // Not released: a thread may hold the old counters and queue its kernel after this.
  if (counters_) replaced_counters_.push_back(counters_);
  counters_ = counters;
  counter_count_ = count;
  return counters_;
}

void Device::synchronize() {
  const cudaStream_t stream = stream_.load(std::memory_order_acquire);
  if (stream == nullptr) return;  // nothing was ever queued
  const DeviceGuard guard(index_);
  check_cuda(cudaStreamSynchronize(stream),
             label_ + ": waiting for queued work (a kernel may have failed)");
}

void Device::shut_down() noexcept {
  try {
    const DeviceGuard guard(index_);
    const cudaStream_t stream = stream_.exchange(nullptr);
    if (stream) cudaStreamSynchronize(stream);
    blas_.reset();
    if (counters_) allocator_.release(counters_);
    for (uint32_t* counters : replaced_counters_) allocator_.release(counters);
    replaced_counters_.clear();
    counters_ = nullptr;
    counter_count_ = 0;
    allocator_.release_cache();
    staging_.release();
    if (stream) cudaStreamDestroy(stream);
  } catch (...) {  // at exit the driver may be gone already: its resources go with the process
  }
  cudaGetLastError();
}

}  // namespace bp::cuda
