// The path through a device backend's own collectives (ABI 1.6), on the fixture device of
// tests/fixtures/collectives.cpp, whose collectives run through MPI on its own memory. These
// cases run in CTest entries that load that fixture; BACKPLANE_DISTRIBUTED_DEVICE_COLLECTIVES=0
// in one of them sends the same tensors through host memory instead.
#include "rank_values.h"

#include <backplane/backplane.h>
#include <backplane/device_collectives.h>
#include <backplane/distributed.h>

#include <doctest/doctest.h>

#include <cstdio>

namespace bp::distributed {
namespace {

using testsupport::rank_values;
using testsupport::tensor_of;
using testsupport::values_of;

Device fixture_device() {
  for (const Device& device : bp::devices()) {
    const std::optional<DeviceCollectives> collectives = DeviceCollectives::of(device);
    if (collectives && collectives->backend() == "collectives") return device;
  }
  FAIL("the fixture backend `collectives` is not loaded: set BACKPLANE_PLUGIN_PATH to its folder");
  return Device::cpu();
}

uint64_t fixture_collectives_run() {
  for (const BackendCounter& counter : bp::backend_counters("collectives")) {
    if (counter.name == "fixture.collectives.run") return counter.value;
  }
  FAIL("the fixture reports no fixture.collectives.run counter");
  return 0;
}

// Where a collective on the fixture device's `dtype` goes: through its collectives unless the
// environment says otherwise or it cannot reduce the dtype.
DataPath expected_path(const ProcessGroup& group, bool reduces, DType dtype) {
  const bool fixture_reduces =
      dtype == kFloat32 || dtype == kFloat64 || dtype == kInt32 || dtype == kInt64;
  if (!group.options().device_collectives || (reduces && !fixture_reduces))
    return DataPath::StagedThroughHost;
  return DataPath::DeviceCollectives;
}

TEST_CASE("device collectives: all_reduce runs through the backend's own, or through host") {
  ProcessGroup& group = init();
  const Device device = fixture_device();
  const double mean_rank = (group.size() - 1) / 2.0;
  for (const DType dtype : {kFloat32, kFloat64, kInt64, kFloat16}) {
    CAPTURE(dtype_name(dtype));
    Tensor tensor = tensor_of(rank_values(group.rank(), 9, dtype), {3, 3}, dtype, device);
    const uint64_t before = fixture_collectives_run();
    const Work work = group.all_reduce_async(tensor, ReduceOp::Max);
    const DataPath path = expected_path(group, true, dtype);
    CHECK(work.data_path() == path);
    work.wait();
    CHECK(fixture_collectives_run() - before == (path == DataPath::DeviceCollectives ? 1u : 0u));
    std::vector<double> expected = rank_values(0, 9, dtype);
    for (int rank = 1; rank < group.size(); ++rank) {
      const std::vector<double> other = rank_values(rank, 9, dtype);
      for (size_t i = 0; i < expected.size(); ++i) expected[i] = std::max(expected[i], other[i]);
    }
    CHECK(values_of(tensor) == expected);
    CHECK(tensor.device() == device);
  }
  // A blocking one, run on the calling thread. (A mean divides with the device's own div_,
  // which this fixture lacks.)
  Tensor ranks = bp::full({5}, group.rank(), kFloat32).to(device);
  group.all_reduce(ranks, ReduceOp::Sum);
  CHECK(values_of(ranks) == std::vector<double>(5, mean_rank * group.size()));
}

TEST_CASE("device collectives: broadcast, all_gather and reduce_scatter on the device") {
  ProcessGroup& group = init();
  const Device device = fixture_device();
  Tensor half = tensor_of(rank_values(group.rank(), 6, kFloat16), {6}, kFloat16, device);
  const Work work = group.broadcast_async(half, group.size() - 1);
  CHECK(work.data_path() == expected_path(group, false, kFloat16));
  work.wait();
  CHECK(values_of(half) == rank_values(group.size() - 1, 6, kFloat16));

  const Tensor input = tensor_of(rank_values(group.rank(), 4, kInt32), {2, 2}, kInt32, device);
  Tensor gathered = bp::empty({2 * group.size(), 2}, kInt32, device);
  group.all_gather(gathered, input);
  std::vector<double> expected;
  for (int rank = 0; rank < group.size(); ++rank) {
    const std::vector<double> part = rank_values(rank, 4, kInt32);
    expected.insert(expected.end(), part.begin(), part.end());
  }
  CHECK(values_of(gathered) == expected);

  Tensor mine = bp::empty({2, 2}, kInt32, device);
  group.reduce_scatter(mine, gathered, ReduceOp::Sum);
  // Every rank gathered the same rows; their sum, rank r's part, is size times those rows.
  const auto part = expected.begin() + 4 * group.rank();
  std::vector<double> scaled(part, part + 4);
  for (double& value : scaled) value *= group.size();
  CHECK(values_of(mine) == scaled);
}

TEST_CASE("device collectives: bp-info's lines say which path the device takes") {
  const Device device = fixture_device();
  const std::string expected = init().options().device_collectives
                                   ? device.str() + ": through collectives's own collectives"
                                   : device.str() +
                                         ": staged through host memory "
                                         "(BACKPLANE_DISTRIBUTED_DEVICE_COLLECTIVES=0)";
  const std::vector<std::string> lines = describe();
  CHECK(std::any_of(lines.begin(), lines.end(),
                    [&](const std::string& line) { return line.starts_with(expected); }));
}

// The two cases below run alone, in CTest entries that make the fixture's all_reduce hang and set
// a short BACKPLANE_DISTRIBUTED_TIMEOUT.
TEST_CASE("stuck device collectives: an asynchronous one fails in wait() after the timeout") {
  ProcessGroup& group = init();
  Tensor tensor = bp::ones({4}, kFloat32).to(fixture_device());
  const Work work = group.all_reduce_async(tensor);
  CHECK_THROWS_WITH_AS(work.wait(),
                       doctest::Contains("every rank entered it, but it did not "
                                         "complete within 2 s"),
                       DistributedError);
  CHECK_THROWS_WITH_AS(group.barrier(), doctest::Contains("an earlier collective broke the group"),
                       DistributedError);
  std::puts("the stuck asynchronous all_reduce failed in wait()");
}

TEST_CASE("stuck device collectives: a blocking one ends the process, saying why") {
  ProcessGroup& group = init();
  Tensor tensor = bp::ones({4}, kFloat32).to(fixture_device());
  group.all_reduce(tensor);
  FAIL("the stuck blocking all_reduce returned");
}

}  // namespace
}  // namespace bp::distributed
