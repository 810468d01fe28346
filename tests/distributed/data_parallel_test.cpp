// DataParallel: every rank starts from rank 0's parameters, backward leaves the ranks' average
// gradient in every grad(), and the same optimizer steps keep the parameters identical.
#include "rank_values.h"

#include <backplane/backplane.h>
#include <backplane/data_parallel.h>
#include <backplane/distributed.h>
#include <backplane/optim.h>

#include <doctest/doctest.h>

#include <cstring>

namespace bp::distributed {
namespace {

using testsupport::values_of;

// Rank 0's copy of `tensor`, fetched from it.
Tensor rank0_copy(ProcessGroup& group, const Tensor& tensor) {
  Tensor copy = tensor.detach().clone();
  group.broadcast(copy, 0);
  return copy;
}

bool bitwise_equal(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.sizes() != b.sizes()) return false;
  const Tensor x = a.detach().cpu().contiguous(), y = b.detach().cpu().contiguous();
  return std::memcmp(x.const_data_ptr(), y.const_data_ptr(),
                     static_cast<size_t>(x.numel()) * x.element_size()) == 0;
}

TEST_CASE("DataParallel starts every rank from rank 0's parameters and buffers") {
  ProcessGroup& group = init();
  Tensor weight = bp::full({3, 2}, group.rank() + 1.0).requires_grad_();
  Tensor running_mean = bp::full({2}, 10.0 * group.rank());
  const DataParallel ddp(group, {weight}, {}, {running_mean});
  CHECK(values_of(weight) == std::vector<double>(6, 1.0));
  CHECK(values_of(running_mean) == std::vector<double>(2, 0.0));
}

TEST_CASE("after backward, every parameter's grad is the ranks' average") {
  ProcessGroup& group = init();
  for (const Device device : testsupport::devices_to_test()) {
    CAPTURE(device.str());
    Tensor w1 = bp::ones({4}, kFloat32, device).requires_grad_();
    Tensor w2 = bp::ones({2, 3}, kFloat32, device).requires_grad_();
    // Buckets of one parameter each: two all_reduces in flight during backward.
    DataParallel ddp(group, {w1, w2}, {.bucket_bytes = 16});
    CHECK(ddp.buckets() == std::vector<std::vector<size_t>>{{1}, {0}});
    for (int pass = 0; pass < 2; ++pass) {
      // d(loss)/d(w1) = (rank + 1) * (pass + 1); d(loss)/d(w2) = rank.
      const double scale = (group.rank() + 1.0) * (pass + 1);
      const Tensor loss = bp::add(bp::mul(bp::sum(w1), scale), bp::mul(bp::sum(w2), group.rank()));
      w1.mutable_grad() = Tensor();
      w2.mutable_grad() = Tensor();
      loss.backward();
      const double mean_rank = (group.size() - 1) / 2.0;
      CHECK(values_of(w1.grad()) == std::vector<double>(4, (mean_rank + 1) * (pass + 1)));
      CHECK(values_of(w2.grad()) == std::vector<double>(6, mean_rank));
    }
  }
}

TEST_CASE("small parameters share a bucket, filled from the last parameter back") {
  ProcessGroup& group = init();
  std::vector<Tensor> parameters;
  for (int i = 0; i < 5; ++i) parameters.push_back(bp::zeros({4}).requires_grad_());
  const DataParallel ddp(group, parameters, {.bucket_bytes = 32});
  CHECK(ddp.buckets() == std::vector<std::vector<size_t>>{{4, 3}, {2, 1}, {0}});
}

TEST_CASE("the same SGD steps on different data keep every rank's parameters identical") {
  ProcessGroup& group = init();
  bp::manual_seed(static_cast<uint64_t>(group.rank()));  // different draws on every rank
  Tensor weight = bp::randn({8, 4}).requires_grad_();
  Tensor bias = bp::randn({4}).requires_grad_();
  DataParallel ddp(group, {weight, bias}, {.bucket_bytes = 64});
  optim::SGD optimizer({weight, bias}, {.lr = 0.1, .momentum = 0.9});
  for (int step = 0; step < 5; ++step) {
    const Tensor x = bp::randn({16, 8});
    const Tensor loss = bp::mean(bp::tanh(bp::add(bp::matmul(x, weight), bias)));
    optimizer.zero_grad();
    loss.backward();
    optimizer.step();
    CHECK(bitwise_equal(weight, rank0_copy(group, weight)));
    CHECK(bitwise_equal(bias, rank0_copy(group, bias)));
  }
}

TEST_CASE("a parameter left without a gradient is named at the next pass") {
  ProcessGroup& group = init();
  Tensor used = bp::ones({2}).requires_grad_();
  Tensor unused = bp::ones({2}).requires_grad_();
  DataParallel ddp(group, {used, unused});
  bp::sum(used).backward();
  CHECK_THROWS_WITH_AS(bp::sum(used).backward(),
                       doctest::Contains("left parameters without a gradient (1 Tensor[2]"), Error);
}

TEST_CASE("DataParallel refuses what it cannot train") {
  ProcessGroup& group = init();
  CHECK_THROWS_WITH_AS(DataParallel(group, {}), doctest::Contains("no parameters"), Error);
  CHECK_THROWS_WITH_AS(DataParallel(group, {bp::ones({2})}),
                       doctest::Contains("is not a leaf tensor that requires grad"), Error);
  CHECK_THROWS_WITH_AS(DataParallel(group, {bp::ones({2}).requires_grad_()}, {.bucket_bytes = 0}),
                       doctest::Contains("bucket_bytes is 0"), Error);
}

}  // namespace
}  // namespace bp::distributed
