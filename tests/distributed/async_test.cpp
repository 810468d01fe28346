// The asynchronous forms: the call returns at once, the caller works on, and wait() is where the
// results arrive.
#include "rank_values.h"

#include <backplane/backplane.h>
#include <backplane/distributed.h>

#include <doctest/doctest.h>

#include <chrono>
#include <thread>

namespace bp::distributed {
namespace {

using Clock = std::chrono::steady_clock;
using testsupport::values_of;

TEST_CASE("an asynchronous all_reduce returns at once; unrelated work runs before its wait") {
  ProcessGroup& group = init();
  constexpr auto kLateness = std::chrono::milliseconds(400);
  Tensor tensor = bp::full({1 << 16}, group.rank() + 1, kFloat32);
  if (group.rank() != 0) {
    // The others come late, so rank 0's collective cannot complete before they do.
    std::this_thread::sleep_for(kLateness);
    group.all_reduce(tensor);
  } else {
    const auto start = Clock::now();
    const Work work = group.all_reduce_async(tensor);
    const auto returned = Clock::now();
    CHECK(returned - start < kLateness / 2);
    CHECK_FALSE(work.is_completed());
    // Unrelated work while the collective waits for the others.
    const Tensor a = bp::rand({128, 128});
    Tensor product = bp::matmul(a, a);
    for (int i = 0; i < 8; ++i) product = bp::matmul(product, a).div_(128);
    const auto worked = Clock::now();
    CHECK_FALSE(work.is_completed());
    work.wait();
    const auto waited = Clock::now();
    CHECK(work.is_completed());
    CHECK(worked < waited);
    CHECK(waited - start >= kLateness / 2);
  }
  const double expected = group.size() * (group.size() + 1) / 2.0;
  CHECK(values_of(tensor.slice(0, 0, 4)) == std::vector<double>(4, expected));
}

TEST_CASE("asynchronous collectives complete in the order they were called") {
  ProcessGroup& group = init();
  std::vector<Tensor> tensors;
  std::vector<Work> works;
  for (int i = 0; i < 8; ++i) {
    tensors.push_back(bp::full({1000}, i + group.rank(), kFloat64));
    works.push_back(group.all_reduce_async(tensors.back()));
  }
  works.back().wait();
  for (const Work& work : works) CHECK(work.is_completed());
  for (int i = 0; i < 8; ++i) {
    works[static_cast<size_t>(i)].wait();
    const double expected = group.size() * i + group.size() * (group.size() - 1) / 2.0;
    CHECK(values_of(tensors[static_cast<size_t>(i)].slice(0, 0, 1)) ==
          std::vector<double>{expected});
  }
}

TEST_CASE("waiting twice returns the same results") {
  ProcessGroup& group = init();
  Tensor tensor = bp::ones({2, 4}, kFloat32).transpose(0, 1);
  const Work work = group.broadcast_async(tensor, group.size() - 1);
  work.wait();
  work.wait();
  CHECK(values_of(tensor) == std::vector<double>(8, 1.0));
}

}  // namespace
}  // namespace bp::distributed
