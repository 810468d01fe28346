// The way from a functional op to its kernel allocates nothing on the heap and takes no lock
// once warmed up (DESIGN.md, principle 5): the output's memory comes from the caching
// allocator's per-thread cache, its tensor and storage objects from recycled memory, and the
// kernel from the lock-free dispatch table.
#include "counting_hooks.h"

#include <backplane/backplane.h>

#include <doctest/doctest.h>

#include <mutex>
#include <vector>

using namespace bp;
using hotpath::count_during;
using hotpath::Counts;

namespace {

constexpr int kWarmUpCalls = 100;
constexpr int kCountedCalls = 1000;

// Runs `op` enough times to load the plugins and fill the thread's caches, then counts what
// kCountedCalls more calls allocate and lock, and how many new blocks the host memory pool
// asked the system for meanwhile.
template <typename Op>
void check_allocates_nothing_and_takes_no_lock(Op&& op) {
  for (int i = 0; i < kWarmUpCalls; ++i) op();
  const uint64_t blocks_before = memory_stats(Device::cpu()).cache_misses;
  const Counts counts = count_during([&] {
    for (int i = 0; i < kCountedCalls; ++i) op();
  });
  CHECK(counts.allocations == 0);
  CHECK(counts.locks == 0);
  CHECK(memory_stats(Device::cpu()).cache_misses == blocks_before);
}

}  // namespace

TEST_CASE("the counters see an allocation and a lock on this thread") {
  std::mutex mutex;
  const Counts counts = count_during([&] {
    const std::lock_guard lock(mutex);
    const std::vector<int> values(3);
  });
  CHECK(counts.allocations == 1);
  CHECK(counts.locks == 1);
}

TEST_CASE("bp::add on 1-element float tensors, output allocated") {
  const Tensor a = ones({1});
  const Tensor b = full({1}, 2);
  check_allocates_nothing_and_takes_no_lock([&] {
    const Tensor c = add(a, b);
    REQUIRE(c.data_ptr<float>()[0] == 3.0f);
  });
}

TEST_CASE("bp::add and bp::mul on small tensors of one shape") {
  const Tensor a = ones({4, 8});
  const Tensor b = ones({4, 8});
  check_allocates_nothing_and_takes_no_lock([&] { const Tensor c = add(a, b, 2); });
  check_allocates_nothing_and_takes_no_lock([&] { const Tensor c = mul(a, b); });
}

TEST_CASE("bp::add with broadcasting, which makes expanded views of the inputs") {
  const Tensor column = ones({4, 1});
  const Tensor row = ones({8});
  check_allocates_nothing_and_takes_no_lock([&] { const Tensor c = add(column, row); });
}
