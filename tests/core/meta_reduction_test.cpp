// The reduction meta functions: dims, keepdim, result dtypes and empty reductions.
#include "core_test_support.h"

using namespace bp;
using coretest::check_invalid_argument;
using coretest::shape_of;
using Shape = std::vector<int64_t>;

TEST_CASE("sum reduces the named dims, all of them when none are named") {
  const Tensor t = from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  CHECK(sum(t, {1}).to_vector<float>() == std::vector<float>{6, 15});
  CHECK(shape_of(sum(t, {-1}, /*keepdim=*/true)) == Shape{2, 1});
  CHECK(sum(t).item<float>() == 21);
  CHECK(t.sum().item<float>() == 21);
  CHECK(sum(t, IntArrayRef{}).item<float>() == 21);
  CHECK(shape_of(sum(t, {0, 1}, true)) == Shape{1, 1});
  check_invalid_argument([&] { sum(t, {2}); },
                         {"sum: dim 2 is out of range for a tensor of 2 dims (expected -2..1)"});
  check_invalid_argument([&] { sum(t, {1, -1}); }, {"sum: dim 1 appears multiple times"});
}

TEST_CASE("sum of integers and Bool gives Int64 unless a dtype is given") {
  CHECK(sum(from_vector<int8_t>({100, 100}, {2})).dtype() == kInt64);
  CHECK(sum(from_vector<int8_t>({100, 100}, {2})).item<int64_t>() == 200);
  CHECK(sum(from_vector<bool>({true, true, false}, {3})).item<int64_t>() == 2);
  CHECK(sum(ones({2}), std::nullopt, false, kFloat64).dtype() == kFloat64);
  CHECK(sum(ones({2}), kFloat64).dtype() == kFloat64);
  CHECK(sum(ones({2}, kFloat16)).dtype() == kFloat16);
}

TEST_CASE("sum and mean read an input that widens exactly to their dtype as it is, uncopied") {
  // 16 MiB of Bool: converted to Int64 first, it would take 128 MiB more.
  const Tensor mask = zeros({int64_t{1} << 24}, kBool);
  const Tensor halves = ones({int64_t{1} << 22}, kFloat16);
  const auto held = [] { return memory_stats(Device::cpu()).reserved_bytes; };
  empty_cache(Device::cpu());
  const uint64_t before = held();
  CHECK(sum(mask).item<int64_t>() == 0);
  CHECK(mean(halves, std::nullopt, false, kFloat32).item<float>() == 1.0f);
  CHECK(held() - before < (uint64_t{1} << 20));
  // A conversion that is not exact (float32 into float16) still happens first: kernels refuse
  // any pair that does not widen exactly.
  CHECK(sum(full({3}, 1.5, kFloat32), std::nullopt, false, kFloat16).item<Half>() == Half(4.5f));
}

TEST_CASE("mean needs a floating-point input or dtype") {
  CHECK(mean(from_vector<float>({1, 2, 3, 4}, {2, 2}), {0}).to_vector<float>() ==
        std::vector<float>{2, 3});
  CHECK(mean(from_vector<int32_t>({1, 2}, {2}), std::nullopt, false, kFloat64).item<double>() ==
        1.5);
  CHECK(mean(from_vector<int32_t>({1, 2}, {2}), kFloat64).item<double>() == 1.5);
  CHECK(from_vector<float>({1, 2, 3, 4}, {2, 2}).mean().item<float>() == 2.5f);
  check_invalid_argument([] { mean(ones({2}, kInt64)); },
                         {"mean(): could not infer output dtype", "Got: Long"});
  check_invalid_argument([] { mean(ones({2}), std::nullopt, false, kInt32); },
                         {"Optional dtype must be a floating point dtype. Got: Int"});
}

TEST_CASE("amax, max.dim and argmax take integers and refuse empty reductions") {
  const Tensor t = from_vector<int32_t>({3, 9, 2, 7, 1, 8}, {2, 3});
  CHECK(amax(t, {1}).to_vector<int32_t>() == std::vector<int32_t>{9, 8});
  CHECK(amax(t).item<int32_t>() == 9);
  const auto [values, indices] = max(t, 0);
  CHECK(values.to_vector<int32_t>() == std::vector<int32_t>{7, 9, 8});
  CHECK(indices.dtype() == kInt64);
  CHECK(indices.to_vector<int64_t>() == std::vector<int64_t>{1, 0, 1});
  CHECK(argmax(t).item<int64_t>() == 1);
  CHECK(shape_of(argmax(t, std::nullopt, true)) == Shape{1, 1});
  CHECK(argmax(t, 1, true).to_vector<int64_t>() == std::vector<int64_t>{1, 2});

  const Tensor none = empty({2, 0});
  check_invalid_argument([&] { amax(none, {1}); },
                         {"amax: expected reduction dim 1 to have non-zero size"});
  check_invalid_argument([&] { max(none, -1); }, {"max: expected reduction dim 1"});
  check_invalid_argument([&] { argmax(none); }, {"argmax", "has no elements"});
  CHECK(shape_of(amax(none, {0})) == Shape{0});
  check_invalid_argument([&] { argmax(t, 2); }, {"dim 2 is out of range"});
}

TEST_CASE("a 0-dim tensor reduces over dim 0 or -1") {
  const Tensor scalar = scalar_tensor(5, kFloat32);
  CHECK(sum(scalar, {0}).dim() == 0);
  CHECK(sum(scalar, {-1}).item<float>() == 5);
  CHECK(argmax(scalar, 0).item<int64_t>() == 0);
  check_invalid_argument([&] { sum(scalar, {1}); }, {"tensor of 0 dims"});
}
