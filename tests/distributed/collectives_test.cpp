// Every collective against a reference that each rank computes alone from what every rank
// passes, on the host and on each other loaded device type; run under mpirun with 2 and 4 ranks.
#include "rank_values.h"

#include <backplane/backplane.h>
#include <backplane/distributed.h>

#include <doctest/doctest.h>

#include <algorithm>
#include <functional>

namespace bp::distributed {
namespace {

using testsupport::devices_to_test;
using testsupport::rank_values;
using testsupport::tensor_of;
using testsupport::values_of;

constexpr int64_t kElements = 37;  // not a multiple of any vector width

std::vector<double> reference(ReduceOp op, DType dtype, int size, int64_t count) {
  std::vector<double> result = rank_values(0, count, dtype);
  for (int rank = 1; rank < size; ++rank) {
    const std::vector<double> other = rank_values(rank, count, dtype);
    for (size_t i = 0; i < result.size(); ++i) {
      switch (op) {
        case ReduceOp::Sum:
        case ReduceOp::Mean: result[i] += other[i]; break;
        case ReduceOp::Max: result[i] = std::max(result[i], other[i]); break;
        case ReduceOp::Min: result[i] = std::min(result[i], other[i]); break;
      }
    }
  }
  for (double& value : result) {
    if (op == ReduceOp::Mean) value /= size;
    if (dtype == kBool) value = value != 0;  // or and and
  }
  return result;
}

TEST_CASE("all_reduce gives every rank the sum, mean, max or min of all ranks' tensors") {
  ProcessGroup& group = init();
  CHECK(is_initialized());
  for (const Device device : devices_to_test()) {
    for (const DType dtype : kAllDTypes) {
      for (const ReduceOp op : {ReduceOp::Sum, ReduceOp::Mean, ReduceOp::Max, ReduceOp::Min}) {
        if (op == ReduceOp::Mean && !is_floating_point(dtype)) continue;
        CAPTURE(device.str());
        CAPTURE(dtype_name(dtype));
        CAPTURE(static_cast<int>(op));
        Tensor tensor =
            tensor_of(rank_values(group.rank(), kElements, dtype), {kElements}, dtype, device);
        const uint64_t version = tensor._version();
        group.all_reduce(tensor, op);
        CHECK(values_of(tensor) == reference(op, dtype, group.size(), kElements));
        CHECK(tensor.device() == device);
        CHECK(tensor.dtype() == dtype);
        CHECK(tensor._version() > version);
      }
    }
  }
}

TEST_CASE("a host tensor goes to MPI in place; others, and non-contiguous ones, through a copy") {
  ProcessGroup& group = init();
  const auto all_reduced_through = [&](Tensor tensor, DataPath path) {
    const Work work = group.all_reduce_async(tensor);
    CHECK(work.data_path() == path);
    work.wait();
    CHECK(values_of(tensor) ==
          std::vector<double>(static_cast<size_t>(tensor.numel()), group.size()));
  };
  all_reduced_through(bp::ones({4, 3}), DataPath::InPlace);
  all_reduced_through(bp::ones({3, 4}).transpose(0, 1), DataPath::StagedThroughHost);
  all_reduced_through(bp::ones({4}, kFloat16), DataPath::StagedThroughHost);
  for (const Device device : devices_to_test()) {
    if (!device.is_cpu())
      all_reduced_through(bp::ones({4}, kFloat32, device), DataPath::StagedThroughHost);
  }
}

TEST_CASE("broadcast gives every rank the root's tensor") {
  ProcessGroup& group = init();
  for (const Device device : devices_to_test()) {
    for (const DType dtype : kAllDTypes) {
      for (int root = 0; root < group.size(); ++root) {
        CAPTURE(device.str());
        CAPTURE(dtype_name(dtype));
        CAPTURE(root);
        Tensor tensor =
            tensor_of(rank_values(group.rank(), kElements, dtype), {kElements}, dtype, device);
        group.broadcast(tensor, root);
        CHECK(values_of(tensor) == rank_values(root, kElements, dtype));
      }
    }
  }
}

TEST_CASE("all_gather puts every rank's rows in rank order") {
  ProcessGroup& group = init();
  constexpr int64_t kRows = 3, kColumns = 5;
  for (const Device device : devices_to_test()) {
    for (const DType dtype : kAllDTypes) {
      CAPTURE(device.str());
      CAPTURE(dtype_name(dtype));
      const Tensor input = tensor_of(rank_values(group.rank(), kRows * kColumns, dtype),
                                     {kRows, kColumns}, dtype, device);
      Tensor output = bp::empty({group.size() * kRows, kColumns}, dtype, device);
      group.all_gather(output, input);
      std::vector<double> expected;
      for (int rank = 0; rank < group.size(); ++rank) {
        const std::vector<double> rows = rank_values(rank, kRows * kColumns, dtype);
        expected.insert(expected.end(), rows.begin(), rows.end());
      }
      CHECK(values_of(output) == expected);
    }
  }
}

TEST_CASE("reduce_scatter leaves each rank its rows of the reduction") {
  ProcessGroup& group = init();
  constexpr int64_t kRows = 2, kColumns = 3;
  const int64_t all_rows = group.size() * kRows;
  for (const Device device : devices_to_test()) {
    for (const DType dtype : {kFloat32, kFloat64, kBFloat16, kInt32, kInt64}) {
      for (const ReduceOp op : {ReduceOp::Sum, ReduceOp::Max, ReduceOp::Min}) {
        CAPTURE(device.str());
        CAPTURE(dtype_name(dtype));
        CAPTURE(static_cast<int>(op));
        const Tensor input = tensor_of(rank_values(group.rank(), all_rows * kColumns, dtype),
                                       {all_rows, kColumns}, dtype, device);
        Tensor output = bp::empty({kRows, kColumns}, dtype, device);
        group.reduce_scatter(output, input, op);
        const std::vector<double> whole = reference(op, dtype, group.size(), all_rows * kColumns);
        const auto mine = whole.begin() + group.rank() * kRows * kColumns;
        CHECK(values_of(output) == std::vector<double>(mine, mine + kRows * kColumns));
      }
    }
  }
}

TEST_CASE("a large tensor is reduced whole") {
  ProcessGroup& group = init();
  Tensor tensor = bp::full({1 << 22}, group.rank() + 1, kFloat32);
  group.all_reduce(tensor);
  const double expected = group.size() * (group.size() + 1) / 2.0;
  CHECK(bp::amax(tensor).item<float>() == expected);
  CHECK(bp::amax(bp::neg(tensor)).item<float>() == -expected);
}

TEST_CASE("a collective's arguments are checked on the calling rank before anything moves") {
  ProcessGroup& group = init();
  Tensor integers = bp::ones({4}, kInt32);
  CHECK_THROWS_WITH_AS(group.all_reduce(integers, ReduceOp::Mean),
                       doctest::Contains("ReduceOp::Mean needs a floating dtype, not Int"), Error);
  Tensor tensor = bp::ones({4});
  CHECK_THROWS_WITH_AS(group.broadcast(tensor, group.size()),
                       doctest::Contains("is not a rank of this group"), Error);
  Tensor too_few_rows = bp::empty({1, 4});
  CHECK_THROWS_WITH_AS(group.all_gather(too_few_rows, bp::ones({2, 4})),
                       doctest::Contains("times the rows of the input"), Error);
  Tensor undefined;
  CHECK_THROWS_WITH_AS(group.all_reduce(undefined), doctest::Contains("undefined tensor"), Error);
  // Nothing was submitted: the ranks still count collectives alike.
  Tensor ones = bp::ones({2});
  group.all_reduce(ones);
  CHECK(values_of(ones) == std::vector<double>(2, group.size()));
}

}  // namespace
}  // namespace bp::distributed
