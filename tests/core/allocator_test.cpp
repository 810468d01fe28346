// The caching allocator: reuse of freed blocks (by the freeing thread first, then by any),
// out-of-memory errors that leave the process working, and tensors of no elements.
#include "core_test_support.h"

#include "memory/caching_allocator.h"

#include <thread>

using namespace bp;
using coretest::check_error;
using detail::allocator_stats;

#if defined(__SANITIZE_ADDRESS__)
// The huge allocations below must fail the way glibc's malloc does, by returning null;
// AddressSanitizer aborts the process instead unless told otherwise.
extern "C" const char* __asan_default_options() { return "allocator_may_return_null=1"; }
#endif

TEST_CASE("a freed block is handed out again for a similar size") {
  const detail::AllocatorStats before = allocator_stats(Device::cpu());
  void* first = nullptr;
  {
    const Tensor t = empty({1000}, kFloat32);
    first = t.data_ptr();
  }
  const Tensor again = empty({990}, kFloat32);  // rounds to the same size class
  const detail::AllocatorStats after = allocator_stats(Device::cpu());
  CHECK(again.data_ptr() == first);
  CHECK(after.cache_hits > before.cache_hits);
  CHECK(after.allocated_bytes >= before.allocated_bytes + 990 * sizeof(float));
}

TEST_CASE("host memory is 64-byte aligned") {
  for (int64_t size : {1, 3, 100, 5000}) {
    const Tensor t = empty({size}, kInt8);
    CHECK(reinterpret_cast<uintptr_t>(t.data_ptr()) % 64 == 0);
  }
}

TEST_CASE("emptying the cache returns cached blocks") {
  { const Tensor t = empty({4096}); }
  CHECK(allocator_stats(Device::cpu()).cached_bytes > 0);
  detail::empty_allocator_cache();
  CHECK(allocator_stats(Device::cpu()).cached_bytes == 0);
}

TEST_CASE("blocks a thread kept go to the shared pool when it exits, for other threads to use") {
  detail::empty_allocator_cache();  // this thread's cache starts empty
  void* freed_by_thread = nullptr;
  std::thread([&] {
    const Tensor t = empty({100}, kFloat32);
    freed_by_thread = t.data_ptr();
  }).join();
  CHECK(allocator_stats(Device::cpu()).cached_bytes > 0);
  const Tensor again = empty({100}, kFloat32);
  CHECK(again.data_ptr() == freed_by_thread);
}

TEST_CASE("a host allocation too large is OutOfMemory, and the process keeps working") {
  check_error(
      [] { empty({int64_t{1} << 60}, kFloat32); }, ErrorCode::OutOfMemory,
      {"out of memory on cpu", "4611686018427387904 bytes", "Free tensors you no longer need"});
  check_error([] { detail::allocate_device_memory(Device::cpu(), ~size_t{0}); },
              ErrorCode::OutOfMemory, {"out of memory on cpu"});
  CHECK(ones({4}).to_vector<float>() == std::vector<float>(4, 1.0f));
}

TEST_CASE("a device out of memory releases its cache, retries, then reports the plugin's reason") {
  const Device device = coretest::fixture_device_memory_device();
  { const Tensor cached = empty({1024}, kFloat32, device); }
  CHECK(allocator_stats(device).cached_bytes > 0);
  // The fixture device refuses any single allocation over 1 MiB.
  check_error([&] { empty({1024 * 1024}, kFloat32, device); }, ErrorCode::OutOfMemory,
              {"out of memory on fixture_device_memory:0", "4194304 bytes", "even after releasing",
               "fixture_device_memory: ", "the device has 1 MiB"});
  CHECK(allocator_stats(device).cached_bytes == 0);
  CHECK(empty({16}, kFloat32, device).device() == device);
}

TEST_CASE("zero-byte allocations work") {
  void* ptr = detail::allocate_device_memory(Device::cpu(), 0);
  CHECK(ptr != nullptr);
  detail::release_device_memory(Device::cpu(), ptr, 0);
  CHECK(empty({0, 5}).numel() == 0);
}
