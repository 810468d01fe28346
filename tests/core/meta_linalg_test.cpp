// mm, bmm and addmm: ranks, inner dims, batch sizes and dtypes.
#include "core_test_support.h"

using namespace bp;
using coretest::check_invalid_argument;
using coretest::shape_of;
using Shape = std::vector<int64_t>;

TEST_CASE("mm multiplies 2-D tensors with matching inner dims") {
  const Tensor a = from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  const Tensor b = from_vector<float>({1, 0, 0, 1, 1, 1}, {3, 2});
  CHECK(mm(a, b).to_vector<float>() == std::vector<float>{4, 5, 10, 11});
  check_invalid_argument(
      [] {
        mm(ones({2, 3}), ones({4, 5}));
      },
      {"mm: mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)"});
  check_invalid_argument(
      [] {
        mm(ones({3}), ones({3, 2}));
      },
      {"mm: expected self to be a 2-D tensor, got a 1-D tensor of shape [3]"});
  check_invalid_argument(
      [] {
        mm(ones({2, 2}), ones({2, 2}, kFloat64));
      },
      {"mm: expected self and mat2 to have the same dtype, but got Float != "
       "Double"});
  check_invalid_argument(
      [] {
        mm(ones({2, 2}, kBool), ones({2, 2}, kBool));
      },
      {"mm.out takes Float32, Float64, Float16, BFloat16, Int8, UInt8, Int32 or Int64, but self "
       "is Bool"});
}

TEST_CASE("bmm needs 3-D tensors with equal batch sizes") {
  CHECK(shape_of(bmm(ones({4, 2, 3}), ones({4, 3, 5}))) == Shape{4, 2, 5});
  check_invalid_argument(
      [] {
        bmm(ones({4, 2, 3}), ones({2, 3, 5}));
      },
      {"bmm: expected self and mat2 to have the same batch size, got 4"});
  check_invalid_argument(
      [] {
        bmm(ones({4, 2, 3}), ones({4, 2, 5}));
      },
      {"bmm: mat1 and mat2 shapes cannot be multiplied (2x3 and 2x5)"});
  check_invalid_argument([] { bmm(ones({2, 3}), ones({4, 3, 5})); }, {"3-D tensor"});
}

TEST_CASE("addmm broadcasts self to the product's shape") {
  const Tensor bias = from_vector<float>({10, 20}, {2});
  const Tensor a = from_vector<float>({1, 2, 3, 4}, {2, 2});
  const Tensor identity = from_vector<float>({1, 0, 0, 1}, {2, 2});
  CHECK(addmm(bias, a, identity, 1, 2).to_vector<float>() == std::vector<float>{12, 24, 16, 28});
  check_invalid_argument([&] { addmm(ones({3}), a, identity); },
                         {"addmm: self of shape [3] cannot be broadcast to the product's shape "
                          "[2, 2]"});
  check_invalid_argument([&] { addmm(ones({2}, kFloat64), a, identity); },
                         {"addmm: expected self and mat1 to have the same dtype"});
}
