// softmax and layer norm: dtypes, dims and the shapes of weight, bias and the statistics.
#include "core_test_support.h"

using namespace bp;
using coretest::check_invalid_argument;
using coretest::shape_of;
using Shape = std::vector<int64_t>;

TEST_CASE("softmax computes in the dtype argument or the input's floating dtype") {
  const Tensor t = zeros({2, 4});
  CHECK(softmax(t, -1).to_vector<float>() == std::vector<float>(8, 0.25f));
  CHECK(softmax(t, 0, kFloat64).dtype() == kFloat64);
  CHECK(log_softmax(ones({2}, kInt64), 0, kFloat32).dtype() == kFloat32);
  check_invalid_argument([] { softmax(ones({2}, kInt64), 0); },
                         {"softmax.int_out takes Float32, Float64, Float16 or BFloat16, but out "
                          "is Int64; convert with .to(bp::kFloat32)"});
  check_invalid_argument([&] { softmax(t, 2); },
                         {"softmax/log_softmax: dim 2 is out of range for a tensor of 2 dims"});
}

TEST_CASE("native_layer_norm gives the output and per-group statistics") {
  const Tensor input = from_vector<float>({1, 3, 5, 7, 2, 2, 2, 2}, {2, 4});
  const auto [out, mean, rstd] =
      native_layer_norm(input, {4}, ones({4}), zeros({4}, kFloat64), 0.0);
  CHECK(shape_of(out) == Shape{2, 4});
  CHECK(shape_of(mean) == Shape{2, 1});
  CHECK(shape_of(rstd) == Shape{2, 1});
  CHECK(mean.to_vector<float>() == std::vector<float>{4, 2});
  CHECK(out.dtype() == kFloat32);
  const auto [whole, whole_mean, whole_rstd] =
      native_layer_norm(empty({3, 2, 5}), {2, 5}, std::nullopt, std::nullopt, 1e-5);
  CHECK(shape_of(whole_mean) == Shape{3, 1, 1});
}

TEST_CASE("native_layer_norm checks normalized_shape against input, weight and bias") {
  const Tensor input = ones({2, 3});
  check_invalid_argument([&] { native_layer_norm(input, {4}, std::nullopt, std::nullopt, 1e-5); },
                         {"given normalized_shape [4], expected an input of shape [*, 4], but got "
                          "an input of shape [2, 3]"});
  check_invalid_argument([&] { native_layer_norm(input, {3}, ones({4}), std::nullopt, 1e-5); },
                         {"expected weight of shape [3], but got weight of shape [4]"});
  check_invalid_argument(
      [&] {
        native_layer_norm(input, {3}, std::nullopt, ones({1, 3}), 1e-5);
      },
      {"bias of shape [1, 3]"});
  check_invalid_argument([&] { native_layer_norm(input, {}, std::nullopt, std::nullopt, 1e-5); },
                         {"normalized_shape to have at least one element"});
  check_invalid_argument(
      [] {
        native_layer_norm(ones({2, 3}, kInt32), {3}, std::nullopt, std::nullopt, 1e-5);
      },
      {"native_layer_norm.out takes Float32, Float64, Float16 or BFloat16, but input is Int32"});
}
