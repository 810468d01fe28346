// The caching allocator: reuse of freed blocks (by the freeing thread first, then by any),
// out-of-memory errors that leave the process working, tensors of no elements, and what
// bp::memory_stats and bp::empty_cache say and do.
#include "core_test_support.h"

#include "memory/caching_allocator.h"

#include <algorithm>
#include <initializer_list>
#include <optional>
#include <thread>
#include <utility>

using namespace bp;
using coretest::backend_counter;
using coretest::check_error;

#if defined(__SANITIZE_ADDRESS__)
// The huge allocations below must fail the way glibc's malloc does, by returning null;
// AddressSanitizer aborts the process instead unless told otherwise.
extern "C" const char* __asan_default_options() { return "allocator_may_return_null=1"; }
#endif

TEST_CASE("a freed block is handed out again for a similar size") {
  const MemoryStats before = memory_stats(Device::cpu());
  void* first = nullptr;
  {
    const Tensor t = empty({1000}, kFloat32);
    first = t.data_ptr();
  }
  const Tensor again = empty({990}, kFloat32);  // rounds to the same size class
  const MemoryStats after = memory_stats(Device::cpu());
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

TEST_CASE("emptying the host's cache returns its cached blocks, the calling thread's too") {
  {
    const Tensor large = empty({8192});  // 32 KiB: kept by the shared pool when freed
    const Tensor small = empty({16});    // kept by this thread when freed
  }
  const MemoryStats cached = memory_stats(Device::cpu());
  CHECK(cached.reserved_bytes > cached.allocated_bytes);
  empty_cache(Device::cpu());
  const MemoryStats emptied = memory_stats(Device::cpu());
  CHECK(emptied.reserved_bytes == emptied.allocated_bytes);
  CHECK(emptied.device_frees >= cached.device_frees + 2);
}

TEST_CASE("blocks a thread kept go to the shared pool when it exits, for other threads to use") {
  empty_cache(Device::cpu());  // this thread's cache starts empty
  void* freed_by_thread = nullptr;
  std::thread([&] {
    const Tensor t = empty({100}, kFloat32);
    freed_by_thread = t.data_ptr();
  }).join();
  const MemoryStats stats = memory_stats(Device::cpu());
  CHECK(stats.reserved_bytes > stats.allocated_bytes);
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
  CHECK(memory_stats(device).reserved_bytes > memory_stats(device).allocated_bytes);
  // The fixture device refuses any single allocation over 1 MiB.
  check_error([&] { empty({1024 * 1024}, kFloat32, device); }, ErrorCode::OutOfMemory,
              {"out of memory on fixture_device_memory:0", "4194304 bytes", "even after releasing",
               "fixture_device_memory: ", "the device has 1 MiB"});
  CHECK(memory_stats(device).reserved_bytes == memory_stats(device).allocated_bytes);
  CHECK(empty({16}, kFloat32, device).device() == device);
}

TEST_CASE("zero-byte allocations work") {
  void* ptr = detail::allocate_device_memory(Device::cpu(), 0);
  CHECK(ptr != nullptr);
  detail::release_device_memory(Device::cpu(), ptr, 0);
  CHECK(empty({0, 5}).numel() == 0);
}

TEST_CASE("memory_stats counts a known sequence of allocations on a device exactly") {
  const Device device = coretest::fixture_device_memory_device();
  empty_cache(device);
  const MemoryStats start = memory_stats(device);
  REQUIRE(start.reserved_bytes == start.allocated_bytes);
  std::optional<Tensor> a = empty({1000}, kFloat32, device);  // 4000 bytes: a 4096-byte block
  std::optional<Tensor> b = empty({256}, kFloat32, device);   // 1024 bytes: a block of its own
  const MemoryStats two_made = memory_stats(device);
  CHECK(two_made.allocated_bytes == start.allocated_bytes + 5120);
  CHECK(two_made.reserved_bytes == start.reserved_bytes + 5120);
  CHECK(two_made.peak_reserved_bytes ==
        std::max(start.peak_reserved_bytes, start.reserved_bytes + 5120));
  CHECK(two_made.allocations == start.allocations + 2);
  CHECK(two_made.cache_misses == start.cache_misses + 2);
  CHECK(two_made.cache_hits == start.cache_hits);

  a.reset();
  b.reset();
  const MemoryStats both_cached = memory_stats(device);
  CHECK(both_cached.allocated_bytes == start.allocated_bytes);
  CHECK(both_cached.reserved_bytes == start.reserved_bytes + 5120);
  CHECK(both_cached.device_frees == start.device_frees);

  const Tensor c = empty({1024}, kFloat32, device);  // 4096 bytes: a's block again
  const MemoryStats reused = memory_stats(device);
  CHECK(reused.allocated_bytes == start.allocated_bytes + 4096);
  CHECK(reused.reserved_bytes == start.reserved_bytes + 5120);
  CHECK(reused.allocations == start.allocations + 3);
  CHECK(reused.cache_hits == start.cache_hits + 1);
  CHECK(reused.cache_misses == start.cache_misses + 2);

  empty_cache(device);  // b's block goes back; c's is in use
  const MemoryStats emptied = memory_stats(device);
  CHECK(emptied.reserved_bytes == start.reserved_bytes + 4096);
  CHECK(emptied.reserved_bytes == emptied.allocated_bytes);
  CHECK(emptied.device_frees == start.device_frees + 1);
  CHECK(emptied.peak_reserved_bytes == two_made.peak_reserved_bytes);

  reset_peak_memory_stats(device);
  CHECK(memory_stats(device).peak_reserved_bytes == emptied.reserved_bytes);
}

TEST_CASE("empty_cache gives a device's cached blocks back to its plugin, not the blocks in use") {
  const Device device = coretest::fixture_device_memory_device();
  empty_cache(device);
  const uint64_t outstanding =
      backend_counter("fixture_device_memory", "fixture.blocks.outstanding");
  const Tensor kept = empty({64}, kFloat32, device);
  { const Tensor dropped = empty({4096}, kFloat32, device); }
  CHECK(backend_counter("fixture_device_memory", "fixture.blocks.outstanding") == outstanding + 2);
  empty_cache(device);
  CHECK(backend_counter("fixture_device_memory", "fixture.blocks.outstanding") == outstanding + 1);
  CHECK(kept.device() == device);
}

TEST_CASE("memory statistics of a device that does not exist are an error naming it") {
  const Device missing(coretest::fixture_device_memory_device().type(), 5);
  for (const auto& call : std::initializer_list<std::pair<const char*, void (*)(Device)>>{
           {"memory_stats", [](Device d) { memory_stats(d); }},
           {"empty_cache", [](Device d) { empty_cache(d); }},
           {"reset_peak_memory_stats", [](Device d) { reset_peak_memory_stats(d); }}}) {
    CAPTURE(call.first);
    check_error([&] { call.second(missing); }, ErrorCode::InvalidArgument,
                {call.first, "device fixture_device_memory:5 does not exist"});
  }
}
