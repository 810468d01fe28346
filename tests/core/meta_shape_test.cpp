// cat, copy_, fill_ and arange: PyTorch's rules and the errors for breaking them.
#include "core_test_support.h"

#include <limits>

using namespace bp;
using coretest::check_invalid_argument;
using coretest::shape_of;
using Shape = std::vector<int64_t>;

TEST_CASE("cat joins along a dim and promotes dtypes") {
  const Tensor a = from_vector<int32_t>({1, 2, 3, 4}, {2, 2});
  const Tensor b = from_vector<float>({5.5f, 6.5f}, {2, 1});
  const Tensor joined = cat({a, b}, -1);
  CHECK(shape_of(joined) == Shape{2, 3});
  CHECK(joined.dtype() == kFloat32);
  CHECK(joined.to_vector<float>() == std::vector<float>{1, 2, 5.5f, 3, 4, 6.5f});
  CHECK(shape_of(cat({a, a})) == Shape{4, 2});
}

TEST_CASE("cat skips legacy 1-D empty tensors and handles 0-size inputs") {
  const Tensor a = from_vector<float>({1, 2}, {1, 2});
  CHECK(cat({empty({0}), a, empty({0, 2})}).to_vector<float>() == std::vector<float>{1, 2});
  CHECK(shape_of(cat({empty({0}), empty({0})})) == Shape{0});
  CHECK(shape_of(cat({empty({2, 0}), empty({2, 0})}, 1)) == Shape{2, 0});
}

TEST_CASE("cat checks dims, sizes and the list") {
  check_invalid_argument([] { cat({}); }, {"cat: expected a non-empty list of tensors"});
  check_invalid_argument(
      [] {
        cat({ones({2, 2}), ones({2, 2, 1})});
      },
      {"cat: tensors must have the same number of dims", "tensor 1 has 3"});
  check_invalid_argument(
      [] {
        cat({ones({2, 2}), ones({3, 3})}, 1);
      },
      {"cat: sizes of tensors must match except in dim 1: expected size 2 but "
       "got size 3 in dim 0 for tensor 1"});
  check_invalid_argument([] { cat({scalar_tensor(1, kFloat32)}); },
                         {"zero-dimensional tensor (at position 0) cannot be concatenated"});
  check_invalid_argument([] { cat({ones({2})}, 1); }, {"dim 1 is out of range"});
}

TEST_CASE("cat refuses sizes along its dim that add up past int64") {
  // Wrapped around, the sizes would add up to 2, and the kernel would copy far more into it.
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  const Tensor widest = zeros({1}).expand({kMax});
  check_invalid_argument(
      [&] {
        cat({widest, widest, zeros({4})});
      },
      {"cat: the sizes of the tensors along dim 0 overflow int64 (tensor 1 of "
       "shape [9223372036854775807] adds 9223372036854775807 to "
       "9223372036854775807)"});
}

TEST_CASE("copy_ broadcasts src, converts dtypes and moves it across devices") {
  Tensor target = zeros({2, 3}, kInt64);
  target.copy_(from_vector<float>({1.9f, -2.9f, 3.0f}, {3}));
  CHECK(target.to_vector<int64_t>() == std::vector<int64_t>{1, -2, 3, 1, -2, 3});
  target.copy_(full({2, 3}, 5, kInt32).to(coretest::fixture_device_memory_device()));
  CHECK(target.to_vector<int64_t>() == std::vector<int64_t>(6, 5));
  check_invalid_argument([&] { target.copy_(ones({2})); },
                         {"copy_: the source's shape [2] cannot be broadcast to the "
                          "destination's shape [2, 3]"});
  Tensor expanded = zeros({3}).expand({2, 3});
  check_invalid_argument(
      [&] {
        expanded.copy_(ones({2, 3}));
      },
      {"copy_: argument 'self' repeats its elements along dim 0"});
  Tensor overlapping = empty_strided({2, 2}, {1, 1});
  check_invalid_argument(
      [&] {
        overlapping.copy_(ones({2, 2}));
      },
      {"copy_: argument 'self' (sizes [2, 2], strides [1, 1]) has elements "
       "that share memory"});
}

TEST_CASE("copy_ between overlapping views of one storage reads the source first") {
  Tensor t = from_vector<float>({0, 1, 2, 3, 4}, {5});
  t.slice(0, 1, 5).copy_(t.slice(0, 0, 4));
  CHECK(t.to_vector<float>() == std::vector<float>{0, 0, 1, 2, 3});
  Tensor square = from_vector<float>({1, 2, 3, 4}, {2, 2});
  square.copy_(square.transpose(0, 1));
  CHECK(square.to_vector<float>() == std::vector<float>{1, 3, 2, 4});
}

TEST_CASE("fill_ writes strided views and refuses expanded ones") {
  Tensor t = zeros({2, 3});
  t.select(1, 1).fill_(7);
  CHECK(t.to_vector<float>() == std::vector<float>{0, 7, 0, 0, 7, 0});
  Tensor expanded = zeros({1}).expand({4});
  check_invalid_argument([&] { expanded.fill_(1); },
                         {"fill_: argument 'self' repeats its elements along dim 0"});
}

TEST_CASE("arange sizes its result as ceil((end - start) / step)") {
  CHECK(arange(5).to_vector<int64_t>() == std::vector<int64_t>{0, 1, 2, 3, 4});
  CHECK(arange(1, 10, 3).to_vector<int64_t>() == std::vector<int64_t>{1, 4, 7});
  CHECK(arange(5, 0, -2).to_vector<int64_t>() == std::vector<int64_t>{5, 3, 1});
  CHECK(arange(0, 1, 0.25).to_vector<float>() == std::vector<float>{0, 0.25f, 0.5f, 0.75f});
  CHECK(arange(2.5).dtype() == kFloat32);
  CHECK(arange(3, std::nullopt, std::nullopt).dtype() == kInt64);
  CHECK(arange(0, 3, 1, kFloat64).to_vector<double>() == std::vector<double>{0, 1, 2});
  CHECK(arange(4, 4).numel() == 0);
}

TEST_CASE("arange checks step and the direction of the range") {
  check_invalid_argument([] { arange(0, 5, 0); }, {"arange: step must be nonzero"});
  check_invalid_argument([] { arange(0, 5, -1); }, {"inconsistent with the sign of step"});
  check_invalid_argument([] { arange(0.0, -1.0, 0.5); }, {"inconsistent with the sign of step"});
  check_invalid_argument([] { arange(0.0, std::numeric_limits<double>::infinity()); },
                         {"both bounds must be finite"});
}

TEST_CASE("arange_out writes into a tensor on any device, casting when it must") {
  Tensor doubles = empty({0}, kFloat64);
  arange_out(doubles, 0, 3);
  CHECK(doubles.to_vector<double>() == std::vector<double>{0, 1, 2});
  Tensor ints = empty({2}, kInt64);
  check_invalid_argument([&] { arange_out(ints, 0.0, 1.0, 0.5); },
                         {"result type Float can't be cast", "Long"});
}
