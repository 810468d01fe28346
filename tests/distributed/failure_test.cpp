// Failures across ranks: what each rank raises, and how long it takes. The cases whose names
// say a rank dies run on their own, under `mpirun --enable-recovery` (without it, Open MPI
// ends the whole job as soon as one rank dies).
#include <backplane/backplane.h>
#include <backplane/distributed.h>

#include <doctest/doctest.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <string>

namespace bp::distributed {
namespace {

using Clock = std::chrono::steady_clock;

TEST_CASE("a rank passing another shape makes every rank raise an error naming it") {
  ProcessGroup& group = init();
  Tensor tensor = bp::ones({4, group.rank() == 1 ? 5 : 4});
  try {
    group.all_reduce(tensor);
    FAIL("the mismatch went unnoticed");
  } catch (const DistributedError& error) {
    const std::string message = error.what();
    CHECK(message.find("all_reduce") != std::string::npos);
    CHECK(message.find("rank 1 passed Float [4, 5] while rank 0 passed Float [4, 4]") !=
          std::string::npos);
    CHECK(error.ranks() == std::vector<int>{1});
  }
  // The ranks stayed in step: the group is still usable.
  Tensor ones = bp::ones({3});
  group.all_reduce(ones);
  CHECK(ones.to_vector<float>() == std::vector<float>(3, static_cast<float>(group.size())));
}

TEST_CASE("a rank passing another dtype or calling another collective is named") {
  ProcessGroup& group = init();
  Tensor tensor = bp::ones({4}, group.rank() == 1 ? kFloat64 : kFloat32);
  CHECK_THROWS_WITH_AS(group.all_reduce(tensor),
                       doctest::Contains("rank 1 passed Double [4] while rank 0 passed Float [4]"),
                       DistributedError);
  Tensor same = bp::ones({4});
  if (group.rank() == 1) {
    CHECK_THROWS_WITH_AS(group.broadcast(same, 0), doctest::Contains("rank 1 called broadcast #"),
                         DistributedError);
  } else {
    CHECK_THROWS_WITH_AS(group.all_reduce(same), doctest::Contains("rank 1 called broadcast #"),
                         DistributedError);
  }
  group.barrier();
}

// BACKPLANE_DISTRIBUTED_TIMEOUT is set for this case by its CTest entry.
TEST_CASE("a rank that dies is named by the survivors within the timeout") {
  ProcessGroup& group = init();
  REQUIRE(group.size() >= 2);
  group.barrier();
  if (group.rank() == 1) std::raise(SIGKILL);
  Tensor tensor = bp::ones({16});
  const auto start = Clock::now();
  try {
    group.all_reduce(tensor);
    FAIL("the dead rank went unnoticed");
  } catch (const DistributedError& error) {
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    const double timeout = std::chrono::duration<double>(group.options().timeout).count();
    CHECK(error.ranks() == std::vector<int>{1});
    CHECK(std::string(error.what()).find("rank 1 did not reach it") != std::string::npos);
    CHECK(seconds < 2 * timeout + 2);
    std::printf("rank %d named rank 1 after %.1f s: %s\n", group.rank(), seconds, error.what());
  }
  // The group is broken for good: later collectives fail at once.
  CHECK_THROWS_WITH_AS(group.barrier(), doctest::Contains("an earlier collective broke the group"),
                       DistributedError);
}

}  // namespace
}  // namespace bp::distributed
