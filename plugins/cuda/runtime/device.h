// One GPU as the plugin uses it: what it is (for device_properties and messages), its one
// non-blocking stream (every kernel, copy and cuBLASLt call of the plugin goes there, so work on
// one device runs in the order it was queued), its caching allocator, its pinned staging
// buffers and its cuBLASLt context. Everything but the description is created on first use.
#pragma once

#include "kernels/launch.h"
#include "runtime/blas.h"
#include "runtime/device_allocator.h"
#include "runtime/pinned_staging.h"

#include <backplane/sdk/counters.hpp>

#include <cuda_runtime_api.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace bp::cuda {

class Device {
 public:
  // `versions` is "CUDA runtime 13.0, driver 13.0", for the description.
  Device(int index, const cudaDeviceProp& properties, const std::string& versions);
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  int index() const { return index_; }
  const std::string& name() const { return name_; }  // "NVIDIA H100 80GB HBM3"
  // "compute capability 9.0, 132 multiprocessors, 79.1 GiB; CUDA runtime 13.0, driver 13.0; ..."
  const std::string& description() const { return description_; }
  const std::string& label() const { return label_; }  // "cuda:0 (NVIDIA H100 80GB HBM3)"
  uint64_t total_memory() const { return total_memory_; }

  // The device's counters (read_counters): its allocator's statistics, as
  // "cuda0.memory.allocated_bytes", "...reserved_bytes", "...peak_allocated_bytes",
  // "...cuda_malloc_calls" and "...cache_hits"; and conv2d's forward runs through cuDNN, as
  // "cuda0.conv2d.cudnn_runs", and the latest one's algorithm ("...cudnn_algorithm", cuDNN's
  // cudnnConvolutionFwdAlgo_t) and layout ("...cudnn_nhwc": 1 for the channels-last
  // formulation), so that a benchmark can say what ran. The names live as long as the device.
  static constexpr size_t kCounterCount = 8;
  std::array<plugin::CounterValue, kCounterCount> counters() const;
  void count_cudnn_forward(int algorithm, bool channels_last);

  cudaStream_t stream();
  LaunchTarget launch_target();
  DeviceAllocator& allocator() { return allocator_; }
  PinnedStaging& staging() { return staging_; }
  Blas& blas();

  // `count` zeroed counters for reductions split across blocks (see GroupScratch). A pointer it
  // returned stays valid until shut_down, since another thread may not have queued its kernel
  // yet when a larger request replaces the counters.
  uint32_t* zeroed_counters(int64_t count);

  // Waits for all work queued on the stream; reports a kernel's failure, if one failed.
  void synchronize();
  // Finishes queued work and releases the stream, the cuBLASLt context, the staging buffers and
  // cached memory. The runtime calls it once, at exit; the device is not used afterwards.
  void shut_down() noexcept;

 private:
  const int index_;
  std::string name_;
  std::string description_;
  std::string label_;
  uint64_t total_memory_ = 0;
  std::array<std::string, kCounterCount> counter_names_;
  std::atomic<uint64_t> cudnn_forward_runs_{0};
  std::atomic<uint64_t> cudnn_forward_algorithm_{0};
  std::atomic<uint64_t> cudnn_forward_nhwc_{0};
  int multiprocessors_ = 1;
  size_t max_shared_memory_ = 48 * 1024;

  std::once_flag stream_created_;
  // Read without the once_flag by synchronize, which may run while another thread creates it.
  std::atomic<cudaStream_t> stream_{nullptr};
  DeviceAllocator allocator_;
  PinnedStaging staging_;
  std::once_flag blas_created_;
  std::unique_ptr<Blas> blas_;
  std::mutex counters_mutex_;
  uint32_t* counters_ = nullptr;
  int64_t counter_count_ = 0;
  std::vector<uint32_t*> replaced_counters_;  // released by shut_down
};

}  // namespace bp::cuda
