// softmax and layer norm: dtypes, dims and the shapes of weight, bias and the statistics.
#include "core_test_support.h"

#include <core_generated/MetaFunctions.h>

using namespace bp;
using coretest::check_invalid_argument;
using coretest::shape_of;
using Shape = std::vector<int64_t>;

namespace {

Shape shape_of(const OutputSpec& spec) { return {spec.sizes.begin(), spec.sizes.end()}; }

}  // namespace

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

TEST_CASE("native_batch_norm gives per-channel statistics when training, none otherwise") {
  Tensor input = empty({4, 3, 5});
  std::optional<Tensor> none;
  std::optional<Tensor> mean = zeros({3}, kFloat64), var = ones({3});
  const auto training = meta::native_batch_norm_out(input, none, none, none, none, true, 0.1, 1e-5);
  CHECK(shape_of(training[0]) == Shape{4, 3, 5});
  CHECK(shape_of(training[1]) == Shape{3});
  CHECK(shape_of(training[2]) == Shape{3});
  const auto eval = meta::native_batch_norm_out(input, none, none, mean, var, false, 0.1, 1e-5);
  CHECK(shape_of(eval[1]) == Shape{0});
  CHECK(mean->dtype() == kFloat32);  // converted to input's dtype for the kernel
}

TEST_CASE("native_batch_norm checks the input, the statistics its mode reads and the "
          "parameters") {
  const Tensor input = empty({4, 3});
  check_invalid_argument(
      [&] {
        native_batch_norm(empty({3}), std::nullopt, std::nullopt, std::nullopt, std::nullopt,
                          true, 0.1, 1e-5);
      },
      {"native_batch_norm: expected an input of at least 2 dims (N, C, ...), got shape [3]"});
  check_invalid_argument(
      [&] {
        native_batch_norm(input, std::nullopt, std::nullopt, std::nullopt, std::nullopt, false,
                          0.1, 1e-5);
      },
      {"native_batch_norm: evaluation needs running_mean and running_var; pass both"});
  check_invalid_argument(
      [&] {
        native_batch_norm(input, std::nullopt, std::nullopt, zeros({3}), std::nullopt, true, 0.1,
                          1e-5);
      },
      {"native_batch_norm: training with running statistics needs running_mean and "
       "running_var"});
  check_invalid_argument(
      [&] {
        native_batch_norm(input, ones({4}), std::nullopt, std::nullopt, std::nullopt, true, 0.1,
                          1e-5);
      },
      {"native_batch_norm: expected weight of shape [3], but got weight of shape [4]"});
  check_invalid_argument(
      [&] {
        native_batch_norm(input, std::nullopt, std::nullopt, std::nullopt, std::nullopt, true,
                          0.1, -1.0);
      },
      {"native_batch_norm: eps must be a non-negative number, got -1"});
}

TEST_CASE("native_batch_norm_backward reads save_mean and save_invstd when train, else the "
          "running statistics") {
  Tensor grad = empty({4, 3, 2});
  Tensor input = empty({4, 3, 2});
  std::optional<Tensor> none;
  std::optional<Tensor> mean = zeros({3}), invstd = ones({3});
  const auto specs = meta::native_batch_norm_backward_out(grad, input, none, none, none, mean,
                                                          invstd, true, 1e-5);
  CHECK(shape_of(specs[0]) == Shape{4, 3, 2});
  CHECK(shape_of(specs[1]) == Shape{3});
  CHECK(shape_of(specs[2]) == Shape{3});
  check_invalid_argument(
      [&] {
        native_batch_norm_backward(grad, input, std::nullopt, zeros({3}), ones({3}),
                                   std::nullopt, std::nullopt, true, 1e-5);
      },
      {"native_batch_norm_backward: train=true needs save_mean and save_invstd; pass both"});
  check_invalid_argument(
      [&] {
        native_batch_norm_backward(grad, input, std::nullopt, std::nullopt, std::nullopt,
                                   zeros({3}), ones({3}), false, 1e-5);
      },
      {"native_batch_norm_backward: train=false needs running_mean and running_var"});
  check_invalid_argument(
      [&] {
        native_batch_norm_backward(empty({4, 3}), input, std::nullopt, std::nullopt,
                                   std::nullopt, zeros({3}), ones({3}), true, 1e-5);
      },
      {"native_batch_norm_backward: expected grad_out of input's shape [4, 3, 2], got shape "
       "[4, 3]"});

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
