// Comparisons (eq, lt, gt: Bool results) and where.
#include "op_test_support.h"

#include <limits>

namespace optest {
namespace {

struct Comparison {
  std::string name;
  std::vector<DType> dtypes;
  std::function<bool(double, double)> reference;
  std::function<Tensor(const Tensor&, const Tensor&)> call;
  std::function<Tensor(const Tensor&, const bp::Scalar&)> call_scalar;
  std::function<void(Tensor& out, const Tensor&, const Tensor&)> call_out;
};

const std::vector<Comparison>& comparisons() {
  static const std::vector<Comparison> ops = {
      {"eq", declared_dtypes<kernel_dtypes::eq_Tensor_out>(),
       [](double x, double y) { return x == y; },
       [](const Tensor& a, const Tensor& b) { return bp::eq(a, b); },
       [](const Tensor& a, const bp::Scalar& b) { return bp::eq(a, b); },
       [](Tensor& out, const Tensor& a, const Tensor& b) { bp::eq_out(out, a, b); }},
      {"lt", declared_dtypes<kernel_dtypes::lt_Tensor_out>(),
       [](double x, double y) { return x < y; },
       [](const Tensor& a, const Tensor& b) { return bp::lt(a, b); },
       [](const Tensor& a, const bp::Scalar& b) { return bp::lt(a, b); },
       [](Tensor& out, const Tensor& a, const Tensor& b) { bp::lt_out(out, a, b); }},
      {"gt", declared_dtypes<kernel_dtypes::gt_Tensor_out>(),
       [](double x, double y) { return x > y; },
       [](const Tensor& a, const Tensor& b) { return bp::gt(a, b); },
       [](const Tensor& a, const bp::Scalar& b) { return bp::gt(a, b); },
       [](Tensor& out, const Tensor& a, const Tensor& b) { bp::gt_out(out, a, b); }},
  };
  return ops;
}

Values expected_comparison(const Comparison& op, const Tensor& a, const Tensor& b) {
  const Shape shape = broadcast_shapes(shape_of(a), shape_of(b));
  const Values x = broadcast_values(values_of(a), shape_of(a), shape);
  const Values y = broadcast_values(values_of(b), shape_of(b), shape);
  Values result(x.size());
  for (size_t i = 0; i < x.size(); ++i) result[i] = op.reference(x[i], y[i]) ? 1 : 0;
  return result;
}

Values expected_where(const Tensor& condition, const Tensor& a, const Tensor& b,
                      const Shape& shape) {
  const Values c = broadcast_values(values_of(condition), shape_of(condition), shape);
  const Values x = broadcast_values(values_of(a), shape_of(a), shape);
  const Values y = broadcast_values(values_of(b), shape_of(b), shape);
  Values result(c.size());
  for (size_t i = 0; i < c.size(); ++i) result[i] = c[i] != 0 ? x[i] : y[i];
  return result;
}

}  // namespace

TEST_CASE("comparisons give Bool for every dtype, layout and broadcast") {
  const std::pair<Shape, Shape> shape_pairs[] = {{{3, 4}, {3, 4}}, {{3, 4}, {4}}, {{2, 1}, {1, 3}},
                                                 {{0, 2}, {2}},    {{}, {}},      {{1}, {}}};
  for (const Device device : test_devices()) {
    INFO("device " << device.str());
    for (const Comparison& op : comparisons()) {
      for (const DType dtype : op.dtypes) {
        for (const auto& [shape_a, shape_b] : shape_pairs) {
          for (const Layout layout : kAllLayouts) {
            INFO(op.name << " " << name_of(dtype) << " " << shape_string(shape_a) << " "
                         << shape_string(shape_b) << " " << name_of(layout));
            const Tensor a = sample_tensor(shape_a, dtype, layout, 30, device);
            const Tensor b = sample_tensor(shape_b, dtype, Layout::Sliced, 31, device);
            check_tensor(op.call(a, b), broadcast_shapes(shape_a, shape_b), bp::kBool,
                         expected_comparison(op, a, b));
          }
        }
      }
    }
  }
}

TEST_CASE("comparisons: out= tensors, scalar overloads, NaN") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (const Device device : test_devices()) {
    INFO("device " << device.str());
    for (const Comparison& op : comparisons()) {
      for (const Layout layout : kWritableLayouts) {
        INFO(op.name << " into a " << name_of(layout) << " out");
        const Tensor a = sample_tensor({3, 4}, bp::kInt64, Layout::Transposed, 32, device);
        const Tensor b = sample_tensor({3, 4}, bp::kInt64, Layout::Contiguous, 33, device);
        Tensor out = empty_tensor({3, 4}, bp::kBool, layout, device);
        op.call_out(out, a, b);
        check_tensor(out, {3, 4}, bp::kBool, expected_comparison(op, a, b));
      }
      for (const DType dtype : non_bool_dtypes()) {
        INFO(op.name << "(x, 2) " << name_of(dtype));
        const Tensor a = sample_tensor({2, 5}, dtype, Layout::Sliced, 34, device);
        check_tensor(op.call_scalar(a, 2), {2, 5}, bp::kBool,
                     expected_comparison(op, a, make_tensor({2}, {}, dtype, device)));
      }
      INFO(op.name << " with NaN");
      const Tensor with_nan = make_tensor({nan, 1, nan}, {3}, bp::kFloat32, device);
      const Tensor numbers = make_tensor({1, nan, nan}, {3}, bp::kFloat32, device);
      check_tensor(op.call(with_nan, numbers), {3}, bp::kBool, {0, 0, 0});
    }
  }
}

TEST_CASE("where picks self or other by a broadcast condition, for every dtype") {
  for (const Device device : test_devices()) {
    INFO("device " << device.str());
    for (const DType dtype : declared_dtypes<kernel_dtypes::where_self_out>()) {
      for (const Layout layout : kAllLayouts) {
        INFO(name_of(dtype) << " " << name_of(layout));
        const Tensor condition = sample_tensor({3, 4}, bp::kBool, layout, 35, device);
        const Tensor a = sample_tensor({3, 4}, dtype, Layout::Transposed, 36, device);
        const Tensor b = sample_tensor({4}, dtype, Layout::Sliced, 37, device);
        check_tensor(bp::where(condition, a, b), {3, 4}, dtype,
                     expected_where(condition, a, b, {3, 4}));

        Tensor out = empty_tensor({3, 4}, dtype, Layout::Transposed, device);
        bp::where_out(out, condition, a, b);
        check_tensor(out, {3, 4}, dtype, expected_where(condition, a, b, {3, 4}));
      }
    }
    INFO("broadcast in all three, and empty");
    const Tensor column = sample_tensor({2, 1}, bp::kBool, Layout::Contiguous, 38, device);
    const Tensor row = sample_tensor({3}, bp::kFloat32, Layout::Contiguous, 39, device);
    const Tensor scalar = make_tensor({7}, {}, bp::kFloat32, device);
    check_tensor(bp::where(column, row, scalar), {2, 3}, bp::kFloat32,
                 expected_where(column, row, scalar, {2, 3}));
    const Tensor empty = sample_tensor({0, 3}, bp::kFloat32, Layout::Contiguous, 40, device);
    check_tensor(
        bp::where(sample_tensor({3}, bp::kBool, Layout::Contiguous, 41, device), empty, row),
        {0, 3}, bp::kFloat32, {});
  }
}

}  // namespace optest
