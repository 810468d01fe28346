// What the core's meta step promises a kernel about dtypes, and the checks every backend makes
// of it: one dtype for the operands, except that sum and mean may read an input that widens
// exactly to their output's dtype.
#include <backplane/sdk/dtype_promises.hpp>

#include <doctest/doctest.h>

#include <string>

namespace {

using bp::DType;

// A 1-element view of `dtype` over `storage`.
struct View {
  explicit View(DType dtype) {
    tensor.data = storage;
    tensor.ndim = 1;
    tensor.dtype = bp::to_dlpack(dtype);
    tensor.shape = &size;
    tensor.strides = &stride;
  }
  bp::plugin::TensorView view() const { return bp::plugin::TensorView(&tensor); }

  alignas(8) unsigned char storage[8] = {};
  int64_t size = 1;
  int64_t stride = 1;
  DLTensor tensor{};
};

// The message of the error `check` throws.
template <typename Check>
std::string refusal(Check&& check) {
  try {
    check();
  } catch (const bp::plugin::Error& e) {
    CHECK(e.code() == BP_STATUS_INVALID_ARGUMENT);
    return e.what();
  }
  FAIL("the check accepted the view");
  return {};
}

}  // namespace

TEST_CASE("widens_exactly: integers and Bool into Int64, narrower floats into wider ones") {
  for (const DType from : {bp::kBool, bp::kUInt8, bp::kInt8, bp::kInt32, bp::kInt64}) {
    CHECK(bp::widens_exactly(from, bp::kInt64));
  }
  CHECK(bp::widens_exactly(bp::kFloat16, bp::kFloat32));
  CHECK(bp::widens_exactly(bp::kBFloat16, bp::kFloat64));
  CHECK(bp::widens_exactly(bp::kFloat32, bp::kFloat64));
  CHECK(bp::widens_exactly(bp::kInt32, bp::kInt32));
  // Narrowing, or changing the kind of number, is not widening, even where exact for some values.
  CHECK_FALSE(bp::widens_exactly(bp::kFloat32, bp::kFloat16));
  CHECK_FALSE(bp::widens_exactly(bp::kInt64, bp::kInt32));
  CHECK_FALSE(bp::widens_exactly(bp::kInt32, bp::kFloat64));
  CHECK_FALSE(bp::widens_exactly(bp::kFloat16, bp::kBFloat16));
  CHECK_FALSE(bp::widens_exactly(bp::kFloat32, bp::kInt64));
}

TEST_CASE("require_dtype and require_widening_dtype name the op, the argument and both dtypes") {
  const View int8(bp::kInt8);
  bp::plugin::require_widening_dtype("sum", "self", int8.view(), bp::kInt64);
  bp::plugin::require_dtype("add", "self", int8.view(), bp::kInt8);
  CHECK(refusal([&] { bp::plugin::require_dtype("add", "other", int8.view(), bp::kFloat32); }) ==
        "add: expected other of dtype Float, got Char");
  const View float32(bp::kFloat32);
  CHECK(refusal([&] {
          bp::plugin::require_widening_dtype("mean", "self", float32.view(), bp::kFloat16);
        }) == "mean: expected self of dtype Half or one that widens exactly to it, got Float");
}

TEST_CASE("require_dtypes checks every present argument and skips the absent ones") {
  const View float32(bp::kFloat32);
  const View int32(bp::kInt32);
  const bp::plugin::TensorView same = float32.view();
  const bp::plugin::TensorView other = int32.view();
  bp::plugin::require_dtypes("batch_norm", {{"out", &same}, {"weight", nullptr}}, bp::kFloat32);
  CHECK(refusal([&] {
          bp::plugin::require_dtypes(
              "batch_norm", {{"out", &same}, {"weight", nullptr}, {"bias", &other}}, bp::kFloat32);
        }) == "batch_norm: expected bias of dtype Float, got Int");
}
