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

TEST_CASE("softmax's gradients take grad_output and output of one shape and dtype") {
  const Tensor grad = ones({2, 3});
  const Tensor output = full({2, 3}, 1.0 / 3);
  CHECK(_softmax_backward_data(grad, output, 1, kFloat32).dtype() == kFloat32);
  INFO("input_dtype is softmax's input's: grad_input has it");
  CHECK(_log_softmax_backward_data(grad, output, -1, kFloat64).dtype() == kFloat64);
  check_invalid_argument([&] { _softmax_backward_data(grad, ones({3, 2}), 1, kFloat32); },
                         {"_softmax_backward_data: expected grad_output and output of one shape, "
                          "got [2, 3] and [3, 2]"});
  check_invalid_argument(
      [&] { _log_softmax_backward_data(grad, output.to(kFloat64), 1, kFloat32); },
      {"_log_softmax_backward_data: output has dtype Double but the input has Float"});
  check_invalid_argument([&] { _softmax_backward_data(grad, output, 2, kFloat32); },
                         {"dim 2 is out of range for a tensor of 2 dims"});
  check_invalid_argument([&] { _softmax_backward_data(grad, output, 1, kInt64); },
                         {"input_dtype must be a floating dtype (softmax's input), got Long"});
}

TEST_CASE("native_layer_norm_backward checks its arguments as native_layer_norm does") {
  const Tensor input = ones({2, 3});
  const Tensor stats = ones({2, 1});
  const auto [grad_input, grad_weight, grad_bias] =
      native_layer_norm_backward(input, input, {3}, stats, stats, std::nullopt, std::nullopt);
  CHECK(shape_of(grad_input) == Shape{2, 3});
  CHECK(shape_of(grad_weight) == Shape{3});
  CHECK(shape_of(grad_bias) == Shape{3});
  INFO("mean and rstd of any shape that holds one value per group");
  native_layer_norm_backward(input, input, {3}, ones({2}), ones({2}, kFloat64), ones({3}),
                             ones({3}));
  check_invalid_argument(
      [&] {
        native_layer_norm_backward(input, input, {2}, stats, stats, std::nullopt, std::nullopt);
      },
      {"given normalized_shape [2], expected an input of shape [*, 2]"});
  check_invalid_argument(
      [&] {
        native_layer_norm_backward(ones({3, 2}), input, {3}, stats, stats, std::nullopt,
                                   std::nullopt);
      },
      {"expected grad_out of input's shape [2, 3], got [3, 2]"});
  check_invalid_argument(
      [&] {
        native_layer_norm_backward(input, input, {3}, ones({3}), stats, std::nullopt,
                                   std::nullopt);
      },
      {"expected mean with one value per normalised group (2 values"});
  check_invalid_argument(
      [&] {
        native_layer_norm_backward(input, input, {3}, stats, stats, ones({2}), std::nullopt);
      },
      {"expected weight of shape [3], but got weight of shape [2]"});
  check_invalid_argument(
      [&] {
        native_layer_norm_backward(input, input, {3}, stats, stats, std::nullopt, ones({4}));
      },
      {"expected bias of shape [3]"});
  check_invalid_argument(
      [&] {
        native_layer_norm_backward(input.to(kFloat64), input, {3}, stats, stats, std::nullopt,
                                   std::nullopt);
      },
      {"native_layer_norm_backward: grad_out has dtype Double but the input has Float"});
}
