// PyTorch's type promotion: promote_types, result_type with 0-dim tensors and wrapped numbers,
// can_cast, and the dtypes ops give as a result.
#include "core_test_support.h"

#include "tensor/type_promotion.h"

using namespace bp;
using detail::can_cast;
using detail::promote_types;

namespace {

// result_type over tensors made for the check (the core's overload for an op's arguments takes
// references to named tensors).
DType result_type(std::initializer_list<Tensor> tensors) {
  return detail::result_type(std::span<const Tensor>(tensors.begin(), tensors.size()));
}

Tensor dimensioned(DType dtype) { return empty({2}, dtype); }
Tensor zero_dim(DType dtype) { return empty({}, dtype); }
Tensor wrapped(DType dtype) {
  Tensor t = empty({}, dtype);
  t.impl()->set_wrapped_number(true);
  return t;
}

}  // namespace

TEST_CASE("promote_types matches PyTorch's table") {
  struct Row {
    DType a, b, expected;
  };
  const Row table[] = {
      {kBool, kBool, kBool},
      {kBool, kUInt8, kUInt8},
      {kBool, kFloat16, kFloat16},
      {kUInt8, kInt8, kInt32},  // PyTorch: Short, which Backplane lacks
      {kUInt8, kInt32, kInt32},
      {kInt8, kInt64, kInt64},
      {kInt32, kInt64, kInt64},
      {kInt64, kFloat16, kFloat16},
      {kInt64, kBFloat16, kBFloat16},
      {kInt32, kFloat32, kFloat32},
      {kFloat16, kBFloat16, kFloat32},
      {kFloat16, kFloat32, kFloat32},
      {kBFloat16, kFloat64, kFloat64},
      {kFloat32, kFloat64, kFloat64},
  };
  for (const Row& row : table) {
    INFO(dtype_name(row.a) << " with " << dtype_name(row.b));
    CHECK(promote_types(row.a, row.b) == row.expected);
    CHECK(promote_types(row.b, row.a) == row.expected);
  }
}

TEST_CASE("result_type ranks tensors with dims above 0-dim tensors above wrapped numbers") {
  // Same category: the dimensioned tensor decides.
  CHECK(result_type({dimensioned(kInt32), zero_dim(kInt64)}) == kInt32);
  CHECK(result_type({dimensioned(kFloat16), zero_dim(kFloat64)}) == kFloat16);
  CHECK(result_type({dimensioned(kInt32), wrapped(kInt64)}) == kInt32);
  CHECK(result_type({dimensioned(kUInt8), wrapped(kInt64)}) == kUInt8);
  // A higher category raises the result: an integer tensor and a float become Float32, the
  // default dtype, even though the wrapped number is stored as Float64.
  CHECK(result_type({dimensioned(kInt32), wrapped(kFloat64)}) == kFloat32);
  CHECK(result_type({dimensioned(kInt64), zero_dim(kFloat64)}) == kFloat64);
  CHECK(result_type({dimensioned(kBool), wrapped(kInt64)}) == kInt64);
  CHECK(result_type({dimensioned(kFloat16), wrapped(kFloat64)}) == kFloat16);
  // Between 0-dim tensors and wrapped numbers the same rule applies one level down.
  CHECK(result_type({zero_dim(kInt32), wrapped(kFloat64)}) == kFloat32);
  CHECK(result_type({zero_dim(kFloat64), wrapped(kFloat64)}) == kFloat64);
  // Only 0-dim tensors: ordinary promotion among them.
  CHECK(result_type({zero_dim(kInt32), zero_dim(kFloat16)}) == kFloat16);
  CHECK(result_type({dimensioned(kInt8), dimensioned(kUInt8)}) == kInt32);
}

TEST_CASE("can_cast forbids floating to integer and anything but Bool to Bool") {
  CHECK(can_cast(kInt64, kFloat16));
  CHECK(can_cast(kFloat64, kFloat16));
  CHECK(can_cast(kBool, kInt8));
  CHECK(can_cast(kInt64, kUInt8));
  CHECK_FALSE(can_cast(kFloat32, kInt64));
  CHECK_FALSE(can_cast(kInt32, kBool));
  CHECK_FALSE(can_cast(kFloat32, kBool));
}

TEST_CASE("ops return the promoted dtype, with numbers as wrapped scalars") {
  const Tensor ints = from_vector<int32_t>({1, 2, 3}, {3});
  CHECK(add(ints, 2).dtype() == kInt32);
  CHECK(add(ints, 2.5).dtype() == kFloat32);
  CHECK(add(ints, 2.5).to_vector<float>() == std::vector<float>{3.5f, 4.5f, 5.5f});
  CHECK(mul(ints, from_vector<double>({2.0}, {})).dtype() == kFloat64);
  CHECK(add(ints, from_vector<int64_t>({1, 1, 1}, {3})).dtype() == kInt64);
  CHECK(div(ints, 2).dtype() == kFloat32);
  CHECK(div(ints, 2).to_vector<float>() == std::vector<float>{0.5f, 1.0f, 1.5f});
  CHECK(eq(ints, 2.0).to_vector<bool>() == std::vector<bool>{false, true, false});
  // A Float64 tensor keeps a wrapped float's full precision.
  const Tensor doubles = from_vector<double>({1.0}, {1});
  CHECK(add(doubles, 0.1).item<double>() == 1.0 + 0.1);
}
