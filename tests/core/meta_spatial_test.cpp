// The backward ops of conv2d and the 2-D pooling ops: the shapes and dtypes of their outputs,
// and the checks that refuse arguments their forward ops would refuse, or gradients of another
// shape.
#include "core_test_support.h"

#include <core_generated/MetaFunctions.h>

using namespace bp;
using coretest::check_invalid_argument;
using Shape = std::vector<int64_t>;

namespace {

Shape shape_of(const OutputSpec& spec) { return {spec.sizes.begin(), spec.sizes.end()}; }

}  // namespace

TEST_CASE("convolution_backward gives gradients shaped like input, weight and bias") {
  Tensor grad = empty({2, 6, 5, 3});
  Tensor input = empty({2, 4, 9, 8});
  Tensor weight = empty({6, 2, 3, 3});
  const auto specs = meta::convolution_backward_out(grad, input, weight, {2}, {1}, {1, 2}, 2);
  CHECK(shape_of(specs[0]) == Shape{2, 4, 9, 8});
  CHECK(shape_of(specs[1]) == Shape{6, 2, 3, 3});
  CHECK(shape_of(specs[2]) == Shape{6});
  for (const OutputSpec& spec : specs) CHECK(spec.dtype == kFloat32);
}

TEST_CASE(
    "convolution_backward refuses what conv2d refuses, and a grad_output of another "
    "shape or dtype") {
  const Tensor input = empty({1, 4, 5, 5});
  const Tensor weight = empty({6, 2, 3, 3});
  check_invalid_argument(
      [&] {
        convolution_backward(empty({1, 6, 3, 3}), input, weight, {1}, {0}, {1}, 1);
      },
      {"convolution_backward: the input has 4 channels, but weight of shape [6, 2, 3, 3] with "
       "groups=1 expects 2"});
  check_invalid_argument(
      [&] {
        convolution_backward(empty({1, 6, 3, 3}), input, weight, {0}, {0}, {1}, 2);
      },
      {"convolution_backward: stride must be positive"});
  check_invalid_argument(
      [&] {
        convolution_backward(empty({1, 6, 5, 5}), input, weight, {1}, {0}, {1}, 2);
      },
      {"convolution_backward: expected grad_output of shape [1, 6, 3, 3], the forward op's "
       "output for these arguments, got shape [1, 6, 5, 5]"});
  check_invalid_argument(
      [&] {
        convolution_backward(empty({1, 6, 3, 3}, kFloat64), input, weight, {1}, {0}, {1}, 2);
      },
      {"convolution_backward: grad_output"});
  check_invalid_argument(
      [&] {
        convolution_backward(empty({6, 3, 3}), input, weight, {1}, {0}, {1}, 2);
      },
      {"convolution_backward: expected grad_output of shape [1, 6, 3, 3], the forward op's "
       "output for these arguments, got shape [6, 3, 3]"});
}

TEST_CASE("max_pool2d_with_indices gives Int64 indices shaped like its output") {
  Tensor self = empty({2, 3, 7, 9}, kFloat64);
  const auto specs = meta::max_pool2d_with_indices_out(self, {3}, {2}, {1}, {1}, true);
  CHECK(shape_of(specs[0]) == Shape{2, 3, 4, 5});
  CHECK(specs[0].dtype == kFloat64);
  CHECK(shape_of(specs[1]) == Shape{2, 3, 4, 5});
  CHECK(specs[1].dtype == kInt64);
  check_invalid_argument(
      [] {
        max_pool2d_with_indices(empty({1, 1, 4, 4}), {2}, {}, {2});
      },
      {"max_pool2d_with_indices: padding must be at most half the kernel"});
}

TEST_CASE(
    "max_pool2d_with_indices_backward checks grad_output and indices against the "
    "forward op's output") {
  Tensor grad = empty({1, 2, 2, 2});
  Tensor self = empty({1, 2, 4, 4});
  Tensor indices = empty({1, 2, 2, 2}, kInt64);
  const auto specs = meta::max_pool2d_with_indices_backward_grad_input(grad, self, {2}, {}, {0},
                                                                       {1}, false, indices);
  CHECK(shape_of(specs[0]) == Shape{1, 2, 4, 4});
  check_invalid_argument(
      [&] {
        max_pool2d_with_indices_backward(empty({1, 2, 3, 3}), self, {2}, {}, {0}, {1}, false,
                                         indices);
      },
      {"max_pool2d_with_indices_backward: expected grad_output of shape [1, 2, 2, 2]"});
  check_invalid_argument(
      [&] {
        max_pool2d_with_indices_backward(grad, self, {2}, {}, {0}, {1}, false,
                                         empty({1, 2, 2, 2}, kInt32));
      },
      {"max_pool2d_with_indices_backward: expected Long indices of shape [1, 2, 2, 2] "
       "(max_pool2d_with_indices' second output), got Int indices of shape [1, 2, 2, 2]"});
}

TEST_CASE("avg_pool2d_backward checks the window and grad_output as avg_pool2d would") {
  Tensor grad = empty({1, 1, 3, 3});
  Tensor self = empty({1, 1, 5, 5});
  const auto specs =
      meta::avg_pool2d_backward_grad_input(grad, self, {2}, {2}, {0}, true, true, std::nullopt);
  CHECK(shape_of(specs[0]) == Shape{1, 1, 5, 5});
  check_invalid_argument([&] { avg_pool2d_backward(grad, self, {2}, {2}, {0}, true, true, 0); },
                         {"avg_pool2d_backward: divisor_override must not be zero"});
  check_invalid_argument(
      [&] { avg_pool2d_backward(grad, self, {2}, {2}, {0}, false, true, std::nullopt); },
      {"avg_pool2d_backward: expected grad_output of shape [1, 1, 2, 2]"});
}

TEST_CASE("_adaptive_avg_pool2d_backward takes the output size from grad_output") {
  Tensor grad = empty({2, 3, 4, 1});
  Tensor self = empty({2, 3, 7, 5});
  const auto specs = meta::_adaptive_avg_pool2d_backward_out(grad, self);
  CHECK(shape_of(specs[0]) == Shape{2, 3, 7, 5});
  check_invalid_argument(
      [&] {
        _adaptive_avg_pool2d_backward(empty({2, 4, 4, 1}), self);
      },
      {"_adaptive_avg_pool2d_backward: expected grad_output of shape "
       "[2, 3, 4, 1]"});
  check_invalid_argument(
      [&] {
        _adaptive_avg_pool2d_backward(empty({2, 3, 0, 1}), self);
      },
      {"_adaptive_avg_pool2d_backward: output_size must be positive"});
  check_invalid_argument(
      [&] {
        _adaptive_avg_pool2d_backward(empty({3, 4, 1}), self);
      },
      {"_adaptive_avg_pool2d_backward: expected a 4-D grad_output"});
}
