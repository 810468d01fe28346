// The caching device allocator: its statistics, a steady state without cudaMalloc, and running
// out of memory without losing the process. On the allocator itself (one per device, as the
// plugin has) and through the core.
#include "cuda_test_support.h"

#include "device_allocator.h"
#include "runtime.h"

#include <backplane/sdk/status.hpp>

#include <cuda_runtime_api.h>

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

TEST_CASE("the allocator counts blocks, keeps freed ones, and reaches a steady state without cudaMalloc") {
  SKIP_WITHOUT_CUDA_DEVICE();
  DeviceAllocator allocator(0, "cuda:0");
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
  for (int i = 0; i < 100; ++i) round();
  const bp::cuda::MemoryStats steady = allocator.stats();
  CHECK(steady.device_allocations == warm.device_allocations);
  CHECK(steady.reserved_bytes == warm.reserved_bytes);
  CHECK(steady.cache_hits == warm.cache_hits + 100 * sizes.size());

  void* held = allocator.allocate(4096);
  CHECK(allocator.stats().allocated_bytes == 4096);
  CHECK(allocator.release_cache() == warm.reserved_bytes - 4096);
  CHECK(allocator.stats().reserved_bytes == 4096);
  allocator.release(held);
}

TEST_CASE("freeing a pointer the allocator did not hand out is refused") {
  SKIP_WITHOUT_CUDA_DEVICE();
  DeviceAllocator allocator(0, "cuda:0");
  int not_a_block = 0;
  try {
    allocator.release(&not_a_block);
    FAIL("no error");
  } catch (const bp::plugin::Error& e) {
    CHECK(e.code() == BP_STATUS_INVALID_ARGUMENT);
  }
}

TEST_CASE("out of device memory: an error naming the size and the free memory, and the next allocation works") {
  SKIP_WITHOUT_CUDA_DEVICE();
  DeviceAllocator allocator(0, "cuda:0");
  void* cached = allocator.allocate(1 << 20);
  allocator.release(cached);
  size_t free = 0, total = 0;
  REQUIRE(cudaMemGetInfo(&free, &total) == cudaSuccess);
  const uint64_t too_much = uint64_t{total} * 2;
  try {
    allocator.allocate(too_much);
    FAIL("no error");
  } catch (const bp::plugin::Error& e) {
    const std::string message = e.what();
    CHECK(e.code() == BP_STATUS_OUT_OF_MEMORY);
    CHECK_MESSAGE(message.find("out of memory") != std::string::npos, message);
    CHECK_MESSAGE(message.find(std::to_string(too_much) + " bytes") != std::string::npos, message);
    CHECK_MESSAGE(message.find(" free of ") != std::string::npos, message);
    CHECK_MESSAGE(message.find("after giving back") != std::string::npos, message);  // the cache went first
  }
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
