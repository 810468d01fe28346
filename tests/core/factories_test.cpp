// Making tensors: empty, full, zeros, ones, random numbers, scalars, blobs and vectors.
#include "core_test_support.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

using namespace bp;
using coretest::check_invalid_argument;
using coretest::shape_of;
using Shape = std::vector<int64_t>;

TEST_CASE("empty makes a contiguous tensor and rejects negative sizes") {
  const Tensor t = empty({2, 3}, kInt64);
  CHECK(shape_of(t) == Shape{2, 3});
  CHECK(t.strides().vec() == Shape{3, 1});
  CHECK(t.dtype() == kInt64);
  CHECK(t.device() == Device::cpu());
  check_invalid_argument([] { empty({2, -1}); }, {"empty: negative size -1 in shape [2, -1]"});
  check_invalid_argument([] { empty({int64_t{1} << 62, 8}); }, {"empty", "more than"});
}

TEST_CASE("tensors with no elements work like any other") {
  const Tensor t = zeros({0, 4});
  CHECK(t.numel() == 0);
  CHECK(t.to_vector<float>().empty());
  CHECK(t.clone().numel() == 0);
  CHECK(shape_of(t.transpose(0, 1).contiguous()) == Shape{4, 0});
}

TEST_CASE("empty_strided lays out storage for the given strides") {
  const Tensor t = empty_strided({2, 3}, {1, 2}, kFloat32);
  CHECK(t.strides().vec() == Shape{1, 2});
  CHECK(t.impl()->storage()->nbytes() == 6 * sizeof(float));
  check_invalid_argument([] { empty_strided({2, 3}, {1}); }, {"differ in length"});
  check_invalid_argument([] { empty_strided({2}, {-1}); }, {"negative stride -1"});
  // A layout whose farthest element lies past int64 would wrap to a tiny storage.
  check_invalid_argument([] { empty_strided({5}, {(int64_t{1} << 62) + 1}, kUInt8); },
                         {"empty_strided: sizes [5] with strides [4611686018427387905] reach past "
                          "2^63 elements"});
  check_invalid_argument([] { empty({2}, static_cast<DType>(99)); }, {"empty: 99 is not a dtype"});
}

TEST_CASE("full, zeros and ones fill every element, converting the value") {
  CHECK(full({2, 2}, 2.5, kFloat64).to_vector<double>() == std::vector<double>(4, 2.5));
  CHECK(full({3}, 7, kInt8).to_vector<int8_t>() == std::vector<int8_t>(3, 7));
  CHECK(zeros({3}, kInt32).to_vector<int32_t>() == std::vector<int32_t>(3, 0));
  CHECK(ones({2}, kBool).to_vector<bool>() == std::vector<bool>{true, true});
  CHECK(ones({2}, kFloat16).to_vector<Half>()[1] == Half(1.0f));
}

TEST_CASE("a fill value the dtype cannot hold is refused, as PyTorch's fill_ refuses it") {
  check_invalid_argument([] { full({1}, 300, kInt8); },
                         {"fill_: value 300 cannot be converted to Char without overflow (Char "
                          "holds -128 to 127)"});
  check_invalid_argument([] { full({1}, int64_t{1} << 40, kInt32); }, {"value 1099511627776"});
  check_invalid_argument([] { full({1}, -1, kUInt8); }, {"to Byte without overflow"});
  check_invalid_argument([] { full({1}, 1e40, kFloat32); }, {"value 1e+40", "Float"});
  check_invalid_argument([] { full({1}, 1e5, kFloat16); }, {"to Half without overflow"});
  check_invalid_argument([] { full({1}, std::nan(""), kInt32); }, {"value nan", "Int"});
  check_invalid_argument([] { zeros({2}, kInt32).fill_(3e9); },
                         {"fill_: value 3000000000 cannot be converted to Int"});
  // Edges, fractions, infinities and NaN in floating dtypes, and anything in Bool, fit.
  CHECK(full({1}, 127, kInt8).item<int8_t>() == 127);
  CHECK(full({1}, -128, kInt8).item<int8_t>() == -128);
  CHECK(full({1}, 2.75, kInt32).item<int32_t>() == 2);
  CHECK(full({1}, INT64_MIN, kInt64).item<int64_t>() == INT64_MIN);
  CHECK(std::isinf(full({1}, std::numeric_limits<double>::infinity(), kFloat16).item<Half>()));
  CHECK(std::isnan(full({1}, std::nan(""), kBFloat16).item<BFloat16>()));
  CHECK(full({1}, 65504, kFloat16).item<Half>() == Half(65504.0f));
  CHECK(full({1}, 2, kBool).item<bool>());
}

TEST_CASE("a seed makes randn and rand repeat, on any device") {
  manual_seed(42);
  const std::vector<float> first = randn({100}).to_vector<float>();
  manual_seed(42);
  CHECK(randn({100}).to_vector<float>() == first);
  manual_seed(42);
  const Tensor moved = randn({100}, kFloat32, coretest::fixture_device_memory_device());
  CHECK(moved.device() == coretest::fixture_device_memory_device());
  CHECK(moved.cpu().to_vector<float>() == first);
  CHECK(randn({100}).to_vector<float>() != first);
}

TEST_CASE("randn looks standard normal and rand stays between 0 and 1") {
  manual_seed(7);
  const std::vector<double> normal = randn({20000}, kFloat64).to_vector<double>();
  double mean = 0;
  for (double v : normal) mean += v;
  mean /= static_cast<double>(normal.size());
  double variance = 0;
  for (double v : normal) variance += (v - mean) * (v - mean);
  variance /= static_cast<double>(normal.size());
  CHECK(mean == doctest::Approx(0.0).epsilon(0.05));
  CHECK(variance == doctest::Approx(1.0).epsilon(0.05));

  for (DType dtype : {kFloat32, kFloat16, kBFloat16}) {
    const std::vector<float> uniform = rand({5000}, dtype).to(kFloat32).to_vector<float>();
    CHECK(*std::min_element(uniform.begin(), uniform.end()) >= 0.0f);
    CHECK(*std::max_element(uniform.begin(), uniform.end()) < 1.0f);
  }
}

TEST_CASE("randn and rand refuse integer dtypes") {
  check_invalid_argument([] { randn({2}, kInt64); },
                         {"randn: dtype Long is not a floating-point type"});
  check_invalid_argument([] { rand({2}, kBool); }, {"rand: dtype Bool"});
}

TEST_CASE("scalar_tensor makes a 0-dim tensor of the value") {
  const Tensor t = scalar_tensor(3.75, kFloat32);
  CHECK(t.dim() == 0);
  CHECK(t.item<float>() == 3.75f);
  CHECK(scalar_tensor(true, kInt64).item<int64_t>() == 1);
  CHECK(scalar_tensor(-2, kFloat64, coretest::fixture_device()).cpu().item<double>() == -2.0);
}

TEST_CASE("from_blob borrows the caller's memory") {
  float buffer[6] = {0, 1, 2, 3, 4, 5};
  const Tensor t = from_blob(buffer, {2, 3});
  buffer[4] = 40;
  CHECK(t.select(0, 1).to_vector<float>() == std::vector<float>{3, 40, 5});
  const Tensor columns = from_blob(buffer, {3, 2}, {1, 3}, kFloat32);
  CHECK(columns.contiguous().to_vector<float>() == std::vector<float>{0, 3, 1, 40, 2, 5});
  check_invalid_argument(
      [] {
        from_blob(nullptr, {2, 2});
      },
      {"from_blob: the data pointer is null, but shape [2, 2] has 4 elements"});
  CHECK(from_blob(nullptr, {0, 2}).numel() == 0);
}

TEST_CASE("from_vector copies values in and checks that they fill the shape") {
  std::vector<int64_t> values = {1, 2, 3, 4};
  const Tensor t = from_vector(values, {2, 2});
  values[0] = 100;
  CHECK(t.dtype() == kInt64);
  CHECK(t.to_vector<int64_t>() == std::vector<int64_t>{1, 2, 3, 4});
  CHECK(from_vector<bool>({true, false, true}, {3}).to_vector<bool>() ==
        std::vector<bool>{true, false, true});
  CHECK(from_vector<BFloat16>({BFloat16(1.5f)}, {}).item<BFloat16>() == BFloat16(1.5f));
  check_invalid_argument(
      [] {
        from_vector<float>({1, 2, 3}, {2, 2});
      },
      {"from_vector: 3 values do not fill shape [2, 2], which holds 4"});
}
