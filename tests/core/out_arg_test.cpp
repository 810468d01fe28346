// out= and in-place outputs: resizing empty outputs, shape errors, dtype casts through a
// temporary, and strided outputs.
#include "core_test_support.h"

#include "dispatch/out_arg.h"

using namespace bp;
using coretest::check_invalid_argument;
using coretest::shape_of;
using Shape = std::vector<int64_t>;

TEST_CASE("an empty out= tensor is resized to the result's shape") {
  const Tensor a = from_vector<float>({1, 2, 3, 4}, {2, 2});
  Tensor out = empty({0});
  add_out(out, a, a);
  CHECK(shape_of(out) == Shape{2, 2});
  CHECK(out.to_vector<float>() == std::vector<float>{2, 4, 6, 8});
}

TEST_CASE("an out= tensor of another shape with elements is an error") {
  const Tensor a = ones({2, 2});
  Tensor out = empty({3});
  check_invalid_argument(
      [&] { add_out(out, a, a); },
      {"add.out: argument 'out' has shape [3], but the result has shape [2, 2]"});
}

TEST_CASE("an in-place op must not change self's shape") {
  Tensor row = ones({3});
  const Tensor matrix = ones({2, 3});
  check_invalid_argument([&] { row.add_(matrix); },
                         {"add_.Tensor", "the result has shape [2, 3]", "'self'", "has shape [3]"});
}

TEST_CASE("a castable result dtype is written through a temporary") {
  const Tensor ints = from_vector<int32_t>({1, 2, 3}, {3});
  Tensor out = empty({3}, kFloat64);
  add_out(out, ints, ints);
  CHECK(out.dtype() == kFloat64);
  CHECK(out.to_vector<double>() == std::vector<double>{2, 4, 6});

  Tensor floats = from_vector<float>({0.5f, 1.5f}, {2});
  floats.add_(from_vector<int64_t>({1, 1}, {2}));
  CHECK(floats.to_vector<float>() == std::vector<float>{1.5f, 2.5f});
}

TEST_CASE("a result dtype that cannot be cast to out's is an error") {
  const Tensor floats = ones({2});
  Tensor ints = zeros({2}, kInt64);
  check_invalid_argument([&] { add_out(ints, floats, floats); },
                         {"add.out: result type Float can't be cast to the desired output type "
                          "Long of argument 'out'"});
  check_invalid_argument([&] { ints.add_(floats); },
                         {"result type Float can't be cast", "Long", "'self'"});
  Tensor mask = zeros({2}, kBool);
  check_invalid_argument([&] { add_out(mask, floats, floats); },
                         {"can't be cast to the desired output type Bool"});
}

TEST_CASE("a strided out= tensor receives the result in place") {
  Tensor storage = zeros({2, 4});
  Tensor every_other = storage.slice(1, 0, 4, 2);
  const Tensor a = from_vector<float>({1, 2, 3, 4}, {2, 2});
  add_out(every_other, a, a);
  CHECK(storage.to_vector<float>() == std::vector<float>{2, 0, 4, 0, 6, 0, 8, 0});
  Tensor columns = zeros({2, 2}).transpose(0, 1);
  columns.add_(a);
  CHECK(columns.to_vector<float>() == std::vector<float>{1, 2, 3, 4});
}

TEST_CASE("an out= tensor on another device is an error") {
  Tensor elsewhere = empty({2}).to(coretest::fixture_device());
  const Tensor a = ones({2});
  check_invalid_argument([&] { add_out(elsewhere, a, a); },
                         {"add.out: argument 'out' is on fixture:0", "computed on cpu"});
}

TEST_CASE("OutArg checks an undefined out= tensor") {
  Tensor undefined;
  const OutputSpec spec{{2}, kFloat32, Device::cpu()};
  check_invalid_argument(
      [&] { detail::OutArg(undefined, spec, detail::OutArg::Kind::Out, "add.out", "out"); },
      {"add.out: argument 'out' is an undefined tensor"});
}
