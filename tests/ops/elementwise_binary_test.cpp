// Elementwise arithmetic on two tensors: add, sub, mul, div, maximum, minimum.
#include "op_test_support.h"

#include <cmath>
#include <limits>
#include <utility>

namespace optest {
namespace {

using Reference = std::function<double(double, double)>;

struct BinaryOp {
  std::string name;
  std::vector<DType> dtypes;
  DType (*result_dtype)(DType);
  Reference reference;
  std::function<Tensor(const Tensor&, const Tensor&)> call;
  std::function<void(Tensor& out, const Tensor&, const Tensor&)> call_out;
  std::function<void(Tensor& self, const Tensor&)> call_in_place;  // empty: the op has none
};

DType same_dtype(DType dtype) { return dtype; }

double maximum_reference(double x, double y) {
  return std::isnan(x) || std::isnan(y) ? std::numeric_limits<double>::quiet_NaN() : std::max(x, y);
}

double minimum_reference(double x, double y) {
  return std::isnan(x) || std::isnan(y) ? std::numeric_limits<double>::quiet_NaN() : std::min(x, y);
}

const std::vector<BinaryOp>& binary_ops() {
  static const std::vector<BinaryOp> ops = {
      {"add", declared_dtypes<kernel_dtypes::add_out>(), same_dtype,
       [](double x, double y) { return x + y; },
       [](const Tensor& a, const Tensor& b) { return bp::add(a, b); },
       [](Tensor& out, const Tensor& a, const Tensor& b) { bp::add_out(out, a, b); },
       [](Tensor& self, const Tensor& b) { self.add_(b); }},
      {"add(alpha=2)", declared_dtypes<kernel_dtypes::add_out>(), same_dtype,
       [](double x, double y) { return x + 2 * y; },
       [](const Tensor& a, const Tensor& b) { return bp::add(a, b, 2); },
       [](Tensor& out, const Tensor& a, const Tensor& b) { bp::add_out(out, a, b, 2); },
       [](Tensor& self, const Tensor& b) { self.add_(b, 2); }},
      {"sub", declared_dtypes<kernel_dtypes::sub_out>(), same_dtype,
       [](double x, double y) { return x - y; },
       [](const Tensor& a, const Tensor& b) { return bp::sub(a, b); },
       [](Tensor& out, const Tensor& a, const Tensor& b) { bp::sub_out(out, a, b); },
       [](Tensor& self, const Tensor& b) { self.sub_(b); }},
      {"sub(alpha=3)", declared_dtypes<kernel_dtypes::sub_out>(), same_dtype,
       [](double x, double y) { return x - 3 * y; },
       [](const Tensor& a, const Tensor& b) { return bp::sub(a, b, 3); },
       [](Tensor& out, const Tensor& a, const Tensor& b) { bp::sub_out(out, a, b, 3); },
       [](Tensor& self, const Tensor& b) { self.sub_(b, 3); }},
      {"mul", declared_dtypes<kernel_dtypes::mul_out>(), same_dtype,
       [](double x, double y) { return x * y; },
       [](const Tensor& a, const Tensor& b) { return bp::mul(a, b); },
       [](Tensor& out, const Tensor& a, const Tensor& b) { bp::mul_out(out, a, b); },
       [](Tensor& self, const Tensor& b) { self.mul_(b); }},
      // True division: integers and Bool divide as Float32 (x / 0 is inf, 0 / 0 NaN).
      {"div", all_dtypes(), floating_result, [](double x, double y) { return x / y; },
       [](const Tensor& a, const Tensor& b) { return bp::div(a, b); },
       [](Tensor& out, const Tensor& a, const Tensor& b) { bp::div_out(out, a, b); },
       [](Tensor& self, const Tensor& b) { self.div_(b); }},
      {"maximum",
       declared_dtypes<kernel_dtypes::maximum_out>(),
       same_dtype,
       maximum_reference,
       [](const Tensor& a, const Tensor& b) { return bp::maximum(a, b); },
       [](Tensor& out, const Tensor& a, const Tensor& b) { bp::maximum_out(out, a, b); },
       {}},
      {"minimum",
       declared_dtypes<kernel_dtypes::minimum_out>(),
       same_dtype,
       minimum_reference,
       [](const Tensor& a, const Tensor& b) { return bp::minimum(a, b); },
       [](Tensor& out, const Tensor& a, const Tensor& b) { bp::minimum_out(out, a, b); },
       {}},
  };
  return ops;
}

// reference(a, b) elementwise, with PyTorch broadcasting.
Values expected_values(const Reference& reference, const Tensor& a, const Tensor& b) {
  const Shape shape = broadcast_shapes(shape_of(a), shape_of(b));
  const Values x = broadcast_values(values_of(a), shape_of(a), shape);
  const Values y = broadcast_values(values_of(b), shape_of(b), shape);
  Values result(x.size());
  for (size_t i = 0; i < x.size(); ++i) result[i] = reference(x[i], y[i]);
  return result;
}

void check_binary(const BinaryOp& op, const Tensor& a, const Tensor& b, DType dtype) {
  const Shape shape = broadcast_shapes(shape_of(a), shape_of(b));
  check_tensor(op.call(a, b), shape, op.result_dtype(dtype), expected_values(op.reference, a, b));
}

// Pairs of input layouts: every layout appears on both sides.
constexpr std::pair<Layout, Layout> kLayoutPairs[] = {
    {Layout::Contiguous, Layout::Contiguous},
    {Layout::Transposed, Layout::Sliced},
    {Layout::Expanded, Layout::Transposed},
    {Layout::Sliced, Layout::Expanded},
};

}  // namespace

TEST_CASE("binary ops match the reference for every dtype and input layout") {
  for (const Device device : test_devices()) {
    INFO("device " << device.str());
    for (const BinaryOp& op : binary_ops()) {
      for (const DType dtype : op.dtypes) {
        for (const auto& [layout_a, layout_b] : kLayoutPairs) {
          INFO(op.name << " " << name_of(dtype) << " " << name_of(layout_a) << " x "
                       << name_of(layout_b));
          check_binary(op, sample_tensor({3, 4}, dtype, layout_a, 1, device),
                       sample_tensor({3, 4}, dtype, layout_b, 2, device), dtype);
        }
      }
    }
  }
}

TEST_CASE("binary ops broadcast, and handle empty, 1-element and 0-dim tensors") {
  const std::pair<Shape, Shape> shape_pairs[] = {
      {{3, 4}, {4}}, {{2, 1, 3}, {4, 1}}, {{}, {2, 3}}, {{5}, {}},
      {{0, 3}, {3}}, {{0}, {1}},          {{1}, {1}},   {{}, {}},
  };
  for (const Device device : test_devices()) {
    INFO("device " << device.str());
    for (const BinaryOp& op : binary_ops()) {
      for (const DType dtype : op.dtypes) {
        for (const auto& [shape_a, shape_b] : shape_pairs) {
          INFO(op.name << " " << name_of(dtype) << " " << shape_string(shape_a) << " with "
                       << shape_string(shape_b));
          check_binary(op, sample_tensor(shape_a, dtype, Layout::Transposed, 3, device),
                       sample_tensor(shape_b, dtype, Layout::Contiguous, 4, device), dtype);
        }
      }
    }
  }
}

TEST_CASE("binary ops write into out= tensors of any writable layout") {
  for (const Device device : test_devices()) {
    INFO("device " << device.str());
    for (const BinaryOp& op : binary_ops()) {
      for (const DType dtype : op.dtypes) {
        for (const Layout out_layout : kWritableLayouts) {
          INFO(op.name << " " << name_of(dtype) << " into a " << name_of(out_layout) << " out");
          const Tensor a = sample_tensor({3, 4}, dtype, Layout::Sliced, 5, device);
          const Tensor b = sample_tensor({4}, dtype, Layout::Contiguous, 6, device);
          Tensor out = empty_tensor({3, 4}, op.result_dtype(dtype), out_layout, device);
          op.call_out(out, a, b);
          check_tensor(out, {3, 4}, op.result_dtype(dtype), expected_values(op.reference, a, b));
        }
      }
    }
  }
}

TEST_CASE("in-place binary ops update self through any writable layout, also with self as other") {
  for (const Device device : test_devices()) {
    INFO("device " << device.str());
    for (const BinaryOp& op : binary_ops()) {
      if (!op.call_in_place) continue;
      for (const DType dtype : op.dtypes) {
        if (op.result_dtype(dtype) != dtype) continue;  // the result would not fit in self
        for (const Layout layout : kWritableLayouts) {
          INFO(op.name << "_ " << name_of(dtype) << " on a " << name_of(layout) << " self");
          Tensor self = sample_tensor({3, 4}, dtype, layout, 7, device);
          const Tensor other = sample_tensor({4}, dtype, Layout::Sliced, 8, device);
          const Values expected = expected_values(op.reference, self, other);
          op.call_in_place(self, other);
          check_tensor(self, {3, 4}, dtype, expected);

          const Values expected_aliased = expected_values(op.reference, self, self);
          op.call_in_place(self, self);
          check_tensor(self, {3, 4}, dtype, expected_aliased);
        }
      }
    }
  }
}

TEST_CASE("inputs of different dtypes are promoted before the kernel runs") {
  for (const Device device : test_devices()) {
    INFO("device " << device.str());
    const Tensor ints = sample_tensor({2, 3}, bp::kInt32, Layout::Contiguous, 9, device);
    const Tensor floats = sample_tensor({2, 3}, bp::kFloat64, Layout::Transposed, 10, device);
    check_tensor(bp::add(ints, floats), {2, 3}, bp::kFloat64,
                 expected_values([](double x, double y) { return x + y; }, ints, floats));
    const Tensor bools = sample_tensor({3}, bp::kBool, Layout::Contiguous, 11, device);
    check_tensor(bp::mul(ints, bools), {2, 3}, bp::kInt32,
                 expected_values([](double x, double y) { return x * y; }, ints, bools));
  }
}

TEST_CASE("scalar overloads of add, sub, mul and div") {
  struct ScalarCase {
    std::string name;
    std::function<Tensor(const Tensor&)> call;
    std::function<double(double)> reference;
    DType (*result_dtype)(DType);
  };
  const ScalarCase cases[] = {
      {"add(x, 3)", [](const Tensor& x) { return bp::add(x, 3); }, [](double x) { return x + 3; },
       same_dtype},
      {"add(x, 3, alpha=2)", [](const Tensor& x) { return bp::add(x, 3, 2); },
       [](double x) { return x + 6; }, same_dtype},
      {"sub(x, 2)", [](const Tensor& x) { return bp::sub(x, 2); }, [](double x) { return x - 2; },
       same_dtype},
      {"mul(x, 3)", [](const Tensor& x) { return bp::mul(x, 3); }, [](double x) { return x * 3; },
       same_dtype},
      {"div(x, 4)", [](const Tensor& x) { return bp::div(x, 4); }, [](double x) { return x / 4; },
       floating_result},
      {"x.mul_(2)",
       [](const Tensor& x) {
         Tensor y = x.clone();
         y.mul_(2);
         return y;
       },
       [](double x) { return x * 2; }, same_dtype},
  };
  for (const Device device : test_devices()) {
    INFO("device " << device.str());
    for (const ScalarCase& c : cases) {
      for (const DType dtype : non_bool_dtypes()) {
        INFO(c.name << " " << name_of(dtype));
        const Tensor x = sample_tensor({2, 3}, dtype, Layout::Transposed, 12, device);
        Values expected = values_of(x);
        for (double& v : expected) v = c.reference(v);
        check_tensor(c.call(x), {2, 3}, c.result_dtype(dtype), expected);
      }
    }
  }
}

// As in PyTorch, a 0-dim tensor on the host joins tensors on another device in elementwise ops
// (it is moved there); other host tensors do not.
TEST_CASE("a 0-dim host tensor joins tensors on another device in elementwise ops") {
  for (const Device device : test_devices()) {
    if (device.is_cpu()) continue;
    INFO("device " << device.str());
    const Tensor x = sample_tensor({2, 3}, bp::kFloat32, Layout::Transposed, 13, device);
    const Tensor half = bp::scalar_tensor(0.5, bp::kFloat32);
    Values expected = values_of(x);
    for (double& v : expected) v *= 0.5;
    const Tensor product = bp::mul(x, half);
    CHECK(product.device() == device);
    check_tensor(product, {2, 3}, bp::kFloat32, expected);
    check_tensor(bp::mul(half, x), {2, 3}, bp::kFloat32, expected);
    Tensor y = x.clone();
    y.mul_(half);
    check_tensor(y, {2, 3}, bp::kFloat32, expected);
    const Tensor picked = bp::where(bp::gt(x, 0), x, bp::scalar_tensor(0.0, bp::kFloat32));
    CHECK(picked.device() == device);
    check_error([&] { bp::mul(x, bp::ones({1})); }, "expected all tensors on one device");
    check_error(
        [&] {
          bp::mm(x, bp::ones({3, 1}).select(1, 0).unsqueeze(1));
        },
        "expected all tensors on one device");
  }
}

TEST_CASE("maximum and minimum propagate NaN") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (const Device device : test_devices()) {
    for (const DType dtype : floating_dtypes()) {
      INFO("device " << device.str() << " " << name_of(dtype));
      const Tensor a = make_tensor({nan, 1, nan, -2}, {4}, dtype, device);
      const Tensor b = make_tensor({0, nan, nan, 3}, {4}, dtype, device);
      check_tensor(bp::maximum(a, b), {4}, dtype, {nan, nan, nan, 3});
      check_tensor(bp::minimum(a, b), {4}, dtype, {nan, nan, nan, -2});
    }
  }
}

TEST_CASE("integer arithmetic wraps around like the dtype, signed overflow too") {
  for (const Device device : test_devices()) {
    INFO("device " << device.str());
    const Tensor small = make_tensor({3, 200}, {2}, bp::kUInt8, device);
    const Tensor large = make_tensor({10, 100}, {2}, bp::kUInt8, device);
    check_tensor(bp::sub(small, large), {2}, bp::kUInt8, {249, 100});
    check_tensor(bp::add(small, large), {2}, bp::kUInt8, {13, 44});

    INFO("signed overflow wraps as two's complement does");
    const int32_t int_max = std::numeric_limits<int32_t>::max();
    const Tensor ints = bp::from_vector<int32_t>({int_max, -int_max - 1}, {2}).to(device);
    const Tensor int_ones = bp::from_vector<int32_t>({1, 1}, {2}).to(device);
    CHECK(bp::add(ints, int_ones).cpu().to_vector<int32_t>() ==
          std::vector<int32_t>{-int_max - 1, -int_max});
    CHECK(bp::sub(ints, int_ones).cpu().to_vector<int32_t>() ==
          std::vector<int32_t>{int_max - 1, int_max});
    const int64_t long_max = std::numeric_limits<int64_t>::max();
    const Tensor longs = bp::from_vector<int64_t>({long_max, 3}, {2}).to(device);
    const Tensor twos = bp::from_vector<int64_t>({2, 2}, {2}).to(device);
    CHECK(bp::mul(longs, twos).cpu().to_vector<int64_t>() == std::vector<int64_t>{-2, 6});
    CHECK(bp::add(longs, longs, 3).cpu().to_vector<int64_t>() == std::vector<int64_t>{-4, 12});
  }
}

TEST_CASE("sub with alpha = INT64_MIN: floats subtract -2^63 times other, int64 wraps") {
  const int64_t most_negative = std::numeric_limits<int64_t>::min();
  for (const Device device : test_devices()) {
    INFO("device " << device.str());
    const Tensor ones = make_tensor({1, 1}, {2}, bp::kFloat32, device);
    check_tensor(bp::sub(ones, ones, most_negative), {2}, bp::kFloat32, {0x1p63, 0x1p63});
    const Tensor long_ones = make_tensor({1, 1}, {2}, bp::kInt64, device);
    const std::vector<int64_t> wrapped =
        bp::sub(long_ones, long_ones, most_negative).cpu().to_vector<int64_t>();
    CHECK(wrapped == std::vector<int64_t>(2, most_negative + 1));  // 1 + 2^63, wrapped
  }
}

TEST_CASE("bool subtraction is refused with a clear message") {
  const Tensor mask = make_tensor({1, 0}, {2}, bp::kBool);
  check_error([&] { bp::sub(mask, mask); }, "Bool");
}

}  // namespace optest
