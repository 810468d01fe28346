// The caching device allocator: its statistics, a steady state without cudaMalloc, and running
// out of memory without losing the process. On the allocator itself, over host memory (no GPU
// needed) and over a GPU's, and through the core.
#include "cuda_test_support.h"

#include "runtime/device_allocator.h"
#include "runtime/runtime.h"

#include <backplane/sdk/status.hpp>

#include <cuda_runtime_api.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace {

using bp::cuda::DeviceAllocator;

TEST_CASE("block sizes: 512-byte steps below 1 MiB, 2 MiB steps from there") {
  CHECK(DeviceAllocator::block_size(0) == 512);
  CHECK(DeviceAllocator::block_size(1) == 512);
  CHECK(DeviceAllocator::block_size(513) == 1024);
  CHECK(DeviceAllocator::block_size((1 << 20) - 1) == 1 << 20);
  CHECK(DeviceAllocator::block_size(1 << 20) == 2 << 20);
  CHECK(DeviceAllocator::block_size((2 << 20) + 1) == 4 << 20);
}

// Device memory served from the host, up to a capacity, writing what the allocator asks of it
// to a log that outlives the allocator (which owns it).
class HostDeviceMemory final : public bp::cuda::DeviceMemory {
 public:
  HostDeviceMemory(uint64_t capacity, std::vector<std::string>& log)
      : capacity_(capacity), log_(log) {}
  ~HostDeviceMemory() override {
    for (const auto& [block, bytes] : blocks_) std::free(block);
  }

  void* allocate(uint64_t bytes) override {
    if (bytes == failing_bytes)
      throw bp::plugin::Error(BP_STATUS_DEVICE_ERROR, "test:0: the device failed");
    const bool fits = used_ + bytes <= capacity_;
    log_.push_back("allocate " + std::to_string(bytes) + (fits ? "" : ": full"));
    if (!fits) return nullptr;
    void* block = std::malloc(bytes);
    blocks_.emplace(block, bytes);
    used_ += bytes;
    return block;
  }
  void free(void* block) override {
    const uint64_t bytes = blocks_.at(block);
    log_.push_back("free " + std::to_string(bytes));
    blocks_.erase(block);
    used_ -= bytes;
    std::free(block);
  }
  void synchronize() override { log_.push_back("synchronize"); }
  std::optional<bp::cuda::MemoryInfo> info() override {
    if (!reports_info) return std::nullopt;
    return bp::cuda::MemoryInfo{capacity_ - used_, capacity_};
  }

  // Whether info() can read the device's memory (a driver may not say).
  bool reports_info = true;
  // An allocation of this many bytes fails as a broken device would, not for want of memory.
  uint64_t failing_bytes = 0;

 private:
  const uint64_t capacity_;
  std::vector<std::string>& log_;
  std::map<void*, uint64_t> blocks_;
  uint64_t used_ = 0;
};

constexpr uint64_t kMiB = uint64_t{1} << 20;

DeviceAllocator host_allocator(uint64_t capacity, std::vector<std::string>& log) {
  return DeviceAllocator(std::make_unique<HostDeviceMemory>(capacity, log), "test:0");
}

// The message of the error that allocating `bytes` raises, which must be an out-of-memory one.
std::string out_of_memory_message(DeviceAllocator& allocator, uint64_t bytes) {
  try {
    allocator.allocate(bytes);
  } catch (const bp::plugin::Error& e) {
    CHECK(e.code() == BP_STATUS_OUT_OF_MEMORY);
    return e.what();
  }
  FAIL("allocating " << bytes << " bytes raised no error");
  return {};
}

TEST_CASE(
    "the allocator counts blocks, keeps freed ones, and reaches a steady state asking the device "
    "for none") {
  std::vector<std::string> log;
  DeviceAllocator allocator = host_allocator(64 * kMiB, log);
  const std::vector<uint64_t> sizes = {100, 4096, 1 << 20, 3 << 20, 700};
  auto round = [&] {
    std::vector<void*> blocks;
    for (const uint64_t size : sizes) blocks.push_back(allocator.allocate(size));
    for (void* block : blocks) allocator.release(block);
  };
  round();
  const bp::cuda::MemoryStats warm = allocator.stats();
  CHECK(warm.device_allocations == sizes.size());
  CHECK(warm.allocated_bytes == 0);
  CHECK(warm.reserved_bytes == 512 + 4096 + (2 << 20) + (4 << 20) + 1024);
  CHECK(warm.peak_allocated_bytes == warm.reserved_bytes);
  const size_t asked = log.size();
  for (int i = 0; i < 100; ++i) round();
  const bp::cuda::MemoryStats steady = allocator.stats();
  CHECK(log.size() == asked);
  CHECK(steady.device_allocations == warm.device_allocations);
  CHECK(steady.reserved_bytes == warm.reserved_bytes);
  CHECK(steady.cache_hits == warm.cache_hits + 100 * sizes.size());

  // Giving the cache back waits for queued work first, and keeps live blocks.
  void* held = allocator.allocate(4096);
  CHECK(allocator.stats().allocated_bytes == 4096);
  log.clear();
  CHECK(allocator.release_cache() == warm.reserved_bytes - 4096);
  REQUIRE(log.size() == sizes.size());
  CHECK(log.front() == "synchronize");
  CHECK(allocator.stats().reserved_bytes == 4096);
  allocator.release(held);

  // With every block handed out again, the cache is empty: nothing to wait for or give back.
  held = allocator.allocate(4096);
  log.clear();
  CHECK(allocator.release_cache() == 0);
  CHECK(log.empty());
  allocator.release(held);
}

TEST_CASE(
    "out of device memory, the cache goes back to the device and the allocation is tried again") {
  std::vector<std::string> log;
  DeviceAllocator allocator = host_allocator(8 * kMiB, log);
  allocator.release(allocator.allocate(4 * kMiB));
  log.clear();
  void* block = allocator.allocate(6 * kMiB);
  CHECK(block != nullptr);
  CHECK(log == std::vector<std::string>{"allocate 6291456: full", "synchronize", "free 4194304",
                                        "allocate 6291456"});
  CHECK(allocator.stats().reserved_bytes == 6 * kMiB);
  allocator.release(block);
}

TEST_CASE(
    "out of device memory even without the cache: an error with the sizes, and the allocator stays "
    "usable") {
  std::vector<std::string> log;
  DeviceAllocator allocator = host_allocator(8 * kMiB, log);
  void* live = allocator.allocate(6 * kMiB);
  allocator.release(allocator.allocate(kMiB + 1));  // a 2 MiB block, cached
  CHECK(out_of_memory_message(allocator, 4 * kMiB) ==
        "test:0: out of memory: cannot allocate 4194304 bytes (4.0 MiB); the device has 2097152 "
        "bytes (2.0 MiB) "
        "free of 8388608 bytes (8.0 MiB), of which this plugin holds 6291456 bytes (6.0 MiB) in "
        "live blocks "
        "after giving back 2097152 bytes (2.0 MiB) of cached blocks. Free tensors you no longer "
        "need or work "
        "on smaller pieces.");
  CHECK(allocator.stats().allocated_bytes == 6 * kMiB);
  void* small = allocator.allocate(kMiB);
  CHECK(small != nullptr);
  allocator.release(small);
  allocator.release(live);
}

TEST_CASE(
    "out of device memory where the device's free memory cannot be read, the message says so") {
  std::vector<std::string> log;
  auto memory = std::make_unique<HostDeviceMemory>(8 * kMiB, log);
  memory->reports_info = false;
  DeviceAllocator allocator(std::move(memory), "test:0");
  CHECK(
      out_of_memory_message(allocator, 10 * kMiB) ==
      "test:0: out of memory: cannot allocate 10485760 bytes (10.0 MiB); the device has an unknown "
      "amount free, of which this plugin holds 0 bytes (0.0 MiB) in live blocks. Free tensors you "
      "no longer need or work on smaller pieces.");
}

TEST_CASE(
    "a device failure other than running out of memory reaches the caller as it is, and changes "
    "nothing") {
  std::vector<std::string> log;
  auto memory = std::make_unique<HostDeviceMemory>(64 * kMiB, log);
  memory->failing_bytes = 4 * kMiB;
  DeviceAllocator allocator(std::move(memory), "test:0");
  allocator.release(allocator.allocate(2 * kMiB));  // cached: must stay cached, not be given back
  try {
    allocator.allocate(4 * kMiB);
    FAIL("no error");
  } catch (const bp::plugin::Error& e) {
    CHECK(e.code() == BP_STATUS_DEVICE_ERROR);
    CHECK(std::string(e.what()) == "test:0: the device failed");
  }
  const bp::cuda::MemoryStats stats = allocator.stats();
  CHECK(stats.allocated_bytes == 0);
  CHECK(stats.reserved_bytes == 2 * kMiB);
  CHECK(stats.device_allocations == 1);
}

TEST_CASE(
    "the allocator gives its cached blocks back when it goes, and leaves live ones to their "
    "tensors") {
  std::vector<std::string> log;
  {
    DeviceAllocator allocator = host_allocator(64 * kMiB, log);
    allocator.allocate(kMiB);  // still live at the end
    allocator.release(allocator.allocate(3 * kMiB));
    log.clear();
  }
  CHECK(log == std::vector<std::string>{"synchronize", "free 4194304"});
}

TEST_CASE("freeing a pointer the allocator did not hand out is refused") {
  std::vector<std::string> log;
  DeviceAllocator allocator = host_allocator(64 * kMiB, log);
  int not_a_block = 0;
  try {
    allocator.release(&not_a_block);
    FAIL("no error");
  } catch (const bp::plugin::Error& e) {
    CHECK(e.code() == BP_STATUS_INVALID_ARGUMENT);
    CHECK(std::string(e.what()) ==
          "test:0: a pointer that this device's allocator did not hand out was freed");
  }
}

TEST_CASE(
    "out of device memory: an error naming the size and the free memory, and the next allocation "
    "works") {
  SKIP_WITHOUT_CUDA_DEVICE();
  DeviceAllocator allocator(bp::cuda::cuda_device_memory(0, "cuda:0"), "cuda:0");
  void* cached = allocator.allocate(1 << 20);
  allocator.release(cached);
  size_t free = 0, total = 0;
  REQUIRE(cudaMemGetInfo(&free, &total) == cudaSuccess);
  const uint64_t too_much = uint64_t{total} * 2;
  const std::string message = out_of_memory_message(allocator, too_much);
  CHECK_MESSAGE(message.find("out of memory") != std::string::npos, message);
  CHECK_MESSAGE(message.find(std::to_string(too_much) + " bytes") != std::string::npos, message);
  CHECK_MESSAGE(message.find(" free of ") != std::string::npos, message);
  CHECK_MESSAGE(message.find("after giving back") != std::string::npos,
                message);  // the cache went first
  CHECK(cudaGetLastError() == cudaSuccess);
  void* block = allocator.allocate(1 << 20);
  CHECK(block != nullptr);
  allocator.release(block);
}

TEST_CASE("through the core: out of memory is a bp::Error, and the device keeps working") {
  SKIP_WITHOUT_CUDA_DEVICE();
  const bp::Device device = cudatest::cuda_devices().front();
  try {
    bp::empty({int64_t{1} << 40}, bp::kFloat32, device);  // 4 TiB
    FAIL("no error");
  } catch (const bp::Error& e) {
    const std::string message = e.what();
    CHECK(e.code() == bp::ErrorCode::OutOfMemory);
    CHECK_MESSAGE(message.find("out of memory") != std::string::npos, message);
    CHECK_MESSAGE(message.find(std::to_string(int64_t{1} << 42)) != std::string::npos, message);
  }
  const bp::Tensor ones = bp::ones({1000}, bp::kFloat32, device);
  CHECK(bp::sum(ones, {0}).item<float>() == 1000.0f);
}

// The plugin's counter `name` for cuda:0, read through the core.
uint64_t counter(const std::string& name) {
  for (const bp::BackendCounter& c : bp::backend_counters("cuda")) {
    if (c.name == "cuda0.memory." + name) return c.value;
  }
  FAIL("the cuda plugin reports no counter cuda0.memory." << name);
  return 0;
}

TEST_CASE("the plugin reports each device's allocator statistics as counters") {
  SKIP_WITHOUT_CUDA_DEVICE();
  const bp::Device device = cudatest::cuda_devices().front();
  const uint64_t calls = counter("cuda_malloc_calls");
  {
    // A size no earlier test used, so that neither the core's cache nor the plugin's has a block.
    const bp::Tensor big = bp::empty({(int64_t{1} << 28) + 12345}, bp::kUInt8, device);
    CHECK(counter("cuda_malloc_calls") == calls + 1);
    CHECK(counter("allocated_bytes") >= uint64_t{1} << 28);
    CHECK(counter("peak_allocated_bytes") >= counter("allocated_bytes"));
    CHECK(counter("reserved_bytes") >= counter("allocated_bytes"));
  }
  CHECK(counter("reserved_bytes") >= uint64_t{1} << 28);  // cached by the core, then by the plugin
}

TEST_CASE("through the core: a steady loop of ops allocates no device memory") {
  SKIP_WITHOUT_CUDA_DEVICE();
  const bp::Device device = cudatest::cuda_devices().front();
  const bp::Tensor x = bp::randn({512, 1024}, bp::kFloat32, device);
  const bp::Tensor w = bp::randn({1024, 256}, bp::kFloat32, device);
  auto step = [&] {
    // Elementwise, reduction (with scratch), softmax, layer norm and cuBLASLt (with workspace).
    const bp::Tensor y = bp::softmax(bp::relu(bp::mm(bp::add(x, x), w)), 1);
    const bp::Tensor s = bp::sum(bp::mul(y, y));
    auto [normed, mean, rstd] = bp::native_layer_norm(x, {1024}, std::nullopt, std::nullopt, 1e-5);
    return s.item<float>() + normed.sum().item<float>();
  };
  for (int i = 0; i < 3; ++i) step();
  size_t free_before = 0, free_after = 0, total = 0;
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  REQUIRE(cudaMemGetInfo(&free_before, &total) == cudaSuccess);
  const uint64_t calls = counter("cuda_malloc_calls");
  for (int i = 0; i < 50; ++i) step();
  CHECK(counter("cuda_malloc_calls") == calls);
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  REQUIRE(cudaMemGetInfo(&free_after, &total) == cudaSuccess);
  CHECK(free_after == free_before);  // nor did cuBLASLt or anything else
}

}  // namespace
