// The elementwise meta functions: broadcasting, dtype rules and what the kernels receive.
#include "core_test_support.h"

using namespace bp;
using coretest::check_invalid_argument;
using coretest::shape_of;
using Shape = std::vector<int64_t>;

TEST_CASE("binary ops broadcast their inputs to one shape") {
  const Tensor column = from_vector<float>({1, 2}, {2, 1});
  const Tensor row = from_vector<float>({10, 20, 30}, {3});
  const Tensor sum = add(column, row);
  CHECK(shape_of(sum) == Shape{2, 3});
  CHECK(sum.to_vector<float>() == std::vector<float>{11, 21, 31, 12, 22, 32});
  CHECK(shape_of(mul(empty({0, 1}), empty({3}))) == Shape{0, 3});
  check_invalid_argument(
      [] {
        add(ones({2, 3}), ones({4}));
      },
      {"shapes [2, 3] and [4] cannot be broadcast", "at non-singleton dimension 1"});
}

TEST_CASE("add and sub check alpha against the result's category") {
  const Tensor ints = from_vector<int32_t>({1, 2}, {2});
  CHECK(sub(ints, ints, 2).to_vector<int32_t>() == std::vector<int32_t>{-1, -2});
  check_invalid_argument([&] { add(ints, ints, 1.5); },
                         {"alpha must not be a floating-point number"});
  check_invalid_argument([&] { add(ones({2}), ones({2}), true); },
                         {"Bool alpha is only supported for Bool results"});
  const Tensor mask = from_vector<bool>({true, false}, {2});
  CHECK(add(mask, mask).to_vector<bool>() == std::vector<bool>{true, false});
}

TEST_CASE("sub refuses Bool tensors as PyTorch does") {
  const Tensor mask = from_vector<bool>({true, false}, {2});
  check_invalid_argument([&] { sub(mask, mask); }, {"subtraction with a Bool tensor"});
  check_invalid_argument([&] { sub(ones({2}), mask); }, {"subtraction with a Bool tensor"});
}

TEST_CASE("div always divides in floating point") {
  const Tensor ints = from_vector<int64_t>({1, 3}, {2});
  const Tensor half = div(ints, from_vector<int64_t>({2, 2}, {2}));
  CHECK(half.dtype() == kFloat32);
  CHECK(half.to_vector<float>() == std::vector<float>{0.5f, 1.5f});
  CHECK(div(ones({1}, kFloat64), ints).dtype() == kFloat64);
}

TEST_CASE("comparisons compare in the promoted dtype and give Bool") {
  const Tensor ints = from_vector<int32_t>({1, 2, 3}, {3});
  const Tensor halves = from_vector<float>({1.5f, 1.5f, 3.0f}, {3});
  const Tensor less = lt(ints, halves);
  CHECK(less.dtype() == kBool);
  CHECK(less.to_vector<bool>() == std::vector<bool>{true, false, false});
  CHECK(eq(ints, halves).to_vector<bool>() == std::vector<bool>{false, false, true});
}

TEST_CASE("where needs a Bool condition and broadcasts all three") {
  const Tensor condition = from_vector<bool>({true, false}, {2, 1});
  const Tensor chosen = where(condition, from_vector<int32_t>({1, 2}, {2}), ones({1}, kFloat64));
  CHECK(shape_of(chosen) == Shape{2, 2});
  CHECK(chosen.dtype() == kFloat64);
  CHECK(chosen.to_vector<double>() == std::vector<double>{1, 2, 1, 1});
  check_invalid_argument([] { where(ones({2}), ones({2}), ones({2})); },
                         {"where: expected condition to be a Bool tensor, got Float"});
}

TEST_CASE("unary ops keep the dtype, promote to floating, or refuse Bool as PyTorch does") {
  const Tensor ints = from_vector<int32_t>({-4, 9}, {2});
  CHECK(abs(ints).to_vector<int32_t>() == std::vector<int32_t>{4, 9});
  CHECK(neg(ints).dtype() == kInt32);
  const Tensor roots = sqrt(from_vector<int64_t>({4, 9}, {2}));
  CHECK(roots.dtype() == kFloat32);
  CHECK(roots.to_vector<float>() == std::vector<float>{2, 3});
  CHECK(exp(zeros({1}, kBool)).to_vector<float>() == std::vector<float>{1});
  CHECK(sqrt(ones({1}, kFloat64)).dtype() == kFloat64);
  const Tensor mask = ones({2}, kBool);
  check_invalid_argument([&] { neg(mask); },
                         {"neg.out takes Float32, Float64, Float16, BFloat16, Int8, UInt8, Int32 "
                          "or Int64, but self is Bool; convert with .to(bp::kFloat32)"});
  check_invalid_argument([&] { relu(mask); }, {"Bool"});
}

TEST_CASE("gelu needs a floating-point tensor and a known approximation") {
  CHECK(gelu(zeros({2})).to_vector<float>() == std::vector<float>{0, 0});
  check_invalid_argument([] { gelu(ones({2}), "fast"); },
                         {"gelu: approximate must be 'none' or 'tanh', got 'fast'"});
  check_invalid_argument([] { gelu(ones({2}, kInt64)); },
                         {"gelu.out takes Float32, Float64, Float16 or BFloat16, but self is "
                          "Int64; convert with .to(bp::kFloat32)"});
}

TEST_CASE("an in-place op on an expanded view is refused") {
  Tensor expanded = zeros({3}).expand({2, 3});
  check_invalid_argument(
      [&] {
        expanded.add_(ones({2, 3}));
      },
      {"add_.Tensor: argument 'self' repeats its elements along dim 0 (stride 0, an expanded "
       "view)"});
}

TEST_CASE("gelu_backward and threshold_backward broadcast and promote like binary ops") {
  const Tensor grad = ones({2, 3});
  CHECK(shape_of(gelu_backward(grad, zeros({3}, kFloat64))) == std::vector<int64_t>{2, 3});
  CHECK(gelu_backward(grad, zeros({3}, kFloat64)).dtype() == kFloat64);
  CHECK(threshold_backward(grad, zeros({2, 1}), 0).dtype() == kFloat32);
  check_invalid_argument([&] { gelu_backward(grad, grad, "fast"); },
                         {"gelu_backward: approximate must be 'none' or 'tanh', got 'fast'"});
  check_invalid_argument([] { threshold_backward(ones({2}, kInt64), ones({2}, kInt64), 0); },
                         {"threshold_backward.grad_input takes Float32, Float64, Float16 or "
                          "BFloat16, but grad_output is Int64"});
  check_invalid_argument([&] { gelu_backward(grad, ones({4})); }, {"[2, 3]", "[4]"});
}
