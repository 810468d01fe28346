// Composite ops: the Scalar overloads and matmul.
#include "core_test_support.h"

using namespace bp;
using coretest::check_invalid_argument;
using coretest::shape_of;
using Shape = std::vector<int64_t>;

TEST_CASE("Scalar overloads compute with the number as a wrapped scalar") {
  const Tensor t = from_vector<int32_t>({1, 2, 3}, {3});
  CHECK(add(t, 1, 2).to_vector<int32_t>() == std::vector<int32_t>{3, 4, 5});
  CHECK(sub(t, 1).to_vector<int32_t>() == std::vector<int32_t>{0, 1, 2});
  CHECK(mul(t, 2).dtype() == kInt32);
  CHECK(mul(t, 0.5).to_vector<float>() == std::vector<float>{0.5f, 1, 1.5f});
  CHECK(div(t, 2).to_vector<float>() == std::vector<float>{0.5f, 1, 1.5f});
  CHECK(eq(t, 2).to_vector<bool>() == std::vector<bool>{false, true, false});
  CHECK(lt(t, 2.5).to_vector<bool>() == std::vector<bool>{true, true, false});
  CHECK(gt(t, 1).to_vector<bool>() == std::vector<bool>{false, true, true});
  CHECK(t.add(1).to_vector<int32_t>() == std::vector<int32_t>{2, 3, 4});
}

TEST_CASE("in-place Scalar forms write self and follow its dtype") {
  Tensor t = from_vector<float>({1, 2, 3}, {3});
  t.add_(1).mul_(2).sub_(1, 2).div_(2);
  CHECK(t.to_vector<float>() == std::vector<float>{1, 2, 3});
  t.gt_(1.5);
  CHECK(t.to_vector<float>() == std::vector<float>{0, 1, 1});
  Tensor ints = from_vector<int32_t>({1, 2}, {2});
  check_invalid_argument([&] { ints.add_(0.5); }, {"result type Float can't be cast", "Int"});
}

TEST_CASE("Scalar out= forms of the comparisons write out") {
  const Tensor t = from_vector<float>({1, 2}, {2});
  Tensor out = empty({0}, kBool);
  eq_out(out, t, 2);
  CHECK(out.to_vector<bool>() == std::vector<bool>{false, true});
  lt_out(out, t, 2);
  CHECK(out.to_vector<bool>() == std::vector<bool>{true, false});
  Tensor as_float = empty({2});
  gt_out(as_float, t, 1);
  CHECK(as_float.to_vector<float>() == std::vector<float>{0, 1});
}

TEST_CASE("a Scalar overload on another device keeps the number there") {
  // One element: the fixture's add.out takes only contiguous tensors, and the number arrives
  // expanded.
  const Tensor t = ones({1}).to(coretest::fixture_device());
  const Tensor sum = add(t, 2.0);
  CHECK(sum.device() == coretest::fixture_device());
  CHECK(sum.to_vector<float>() == std::vector<float>{3});
}

TEST_CASE("matmul of 1-D and 2-D operands follows PyTorch") {
  const Tensor v = from_vector<float>({1, 2, 3}, {3});
  const Tensor m = from_vector<float>({1, 0, 0, 1, 1, 1}, {3, 2});
  const Tensor dot = matmul(v, v);
  CHECK(dot.dim() == 0);
  CHECK(dot.item<float>() == 14);
  CHECK(matmul(v, m).to_vector<float>() == std::vector<float>{4, 5});
  CHECK(shape_of(matmul(m.transpose(0, 1), v)) == Shape{2});
  CHECK(matmul(m.transpose(0, 1), v).to_vector<float>() == std::vector<float>{4, 5});
  CHECK(shape_of(matmul(ones({4, 3}), m)) == Shape{4, 2});
}

TEST_CASE("batched matmul broadcasts batch dims") {
  CHECK(shape_of(matmul(ones({5, 4, 3}), ones({3, 2}))) == Shape{5, 4, 2});
  CHECK(shape_of(matmul(ones({5, 4, 3}), ones({3}))) == Shape{5, 4});
  CHECK(shape_of(matmul(ones({3}), ones({5, 3, 2}))) == Shape{5, 2});
  CHECK(shape_of(matmul(ones({4, 3}), ones({5, 3, 2}))) == Shape{5, 4, 2});
  CHECK(shape_of(matmul(ones({2, 1, 4, 3}), ones({7, 3, 2}))) == Shape{2, 7, 4, 2});
  CHECK(shape_of(matmul(ones({0, 4, 3}), ones({3, 2}))) == Shape{0, 4, 2});
  const Tensor batched = matmul(full({2, 1, 2, 3}, 1.0), full({3, 3, 1}, 2.0));
  CHECK(batched.to_vector<float>() == std::vector<float>(12, 6.0f));
}

TEST_CASE("matmul names both shapes when they do not fit") {
  check_invalid_argument([] { matmul(ones({3}), ones({4})); },
                         {"matmul: self of shape [3] and other of shape [4] cannot be multiplied"});
  check_invalid_argument(
      [] {
        matmul(ones({2, 5, 3}), ones({4, 2}));
      },
      {"[2, 5, 3]", "[4, 2]", "last dim of self (3)", "(4)"});
  check_invalid_argument(
      [] {
        matmul(ones({2, 2, 3}), ones({3, 3, 1}));
      },
      {"matmul: the batch dims", "do not broadcast"});
  check_invalid_argument([] { matmul(scalar_tensor(1, kFloat32), ones({2})); },
                         {"at least 1 dim", "0-D and 1-D"});
}
