// Writing and making tensors: copy_ (every dtype to every dtype), fill_, cat and arange.
#include "op_test_support.h"

#include <cmath>
#include <utility>
#include <vector>

namespace optest {
namespace {

// Values every dtype can hold after C++ conversion rules: non-negative (UInt8), small (Int8),
// with fractions that integer targets truncate and zeros that Bool targets turn to false.
const Values kConvertible = {0, 0.5, 1, 2.75, 7, 19.5, 0, 3};

// `value` converted to `dtype` as a C++ static_cast (and so the copy kernel) converts it.
double converted(DType dtype, double value) {
  if (dtype == bp::kBool) return value != 0;
  if (bp::is_floating_point(dtype)) return value;
  return std::trunc(value);
}

// 2-d inputs (row-major values and shape) concatenated along dim 0 or 1.
Values cat_reference(const std::vector<std::pair<Values, Shape>>& inputs, int64_t dim) {
  Values result;
  if (dim == 0) {
    for (const auto& [values, shape] : inputs)
      result.insert(result.end(), values.begin(), values.end());
    return result;
  }
  for (int64_t row = 0; row < inputs.front().second[0]; ++row) {
    for (const auto& [values, shape] : inputs) {
      const auto begin = values.begin() + static_cast<std::ptrdiff_t>(row * shape[1]);
      result.insert(result.end(), begin, begin + static_cast<std::ptrdiff_t>(shape[1]));
    }
  }
  return result;
}

}  // namespace

TEST_CASE("copy_ converts every dtype to every dtype, between any layouts") {
  for (const Device device : test_devices()) {
    INFO("device " << device.str());
    for (const DType from : all_dtypes()) {
      const Tensor source = make_tensor(kConvertible, {2, 4}, from, device);
      Values expected_source;
      for (double v : kConvertible) expected_source.push_back(converted(from, v));
      for (const DType to : declared_dtypes<kernel_dtypes::copy_>()) {
        Values expected;
        for (double v : expected_source) expected.push_back(converted(to, v));
        INFO(name_of(from) << " -> " << name_of(to));
        check_tensor(source.to(to), {2, 4}, to, expected);
        for (const Layout layout : kWritableLayouts) {
          INFO("into a " << name_of(layout) << " tensor");
          Tensor target = empty_tensor({2, 4}, to, layout, device);
          target.copy_(source);
          check_tensor(target, {2, 4}, to, expected);
        }
      }
    }
  }
}

TEST_CASE("copy_ reads any layout, broadcasts its source, and handles empty tensors") {
  for (const Device device : test_devices()) {
    INFO("device " << device.str());
    for (const DType dtype : declared_dtypes<kernel_dtypes::copy_>()) {
      for (const Layout layout : kAllLayouts) {
        INFO(name_of(dtype) << " from a " << name_of(layout) << " source");
        const Tensor source = sample_tensor({3, 4}, dtype, layout, 90, device);
        check_tensor(source.contiguous(), {3, 4}, dtype, values_of(source));
        Tensor target = empty_tensor({3, 4}, dtype, Layout::Transposed, device);
        target.copy_(source);
        check_tensor(target, {3, 4}, dtype, values_of(source));
      }
      INFO(name_of(dtype) << " broadcast");
      const Tensor row = sample_tensor({4}, dtype, Layout::Sliced, 91, device);
      Tensor target = empty_tensor({2, 3, 4}, dtype, Layout::Contiguous, device);
      target.copy_(row);
      check_tensor(target, {2, 3, 4}, dtype, broadcast_values(values_of(row), {4}, {2, 3, 4}));
      Tensor column = empty_tensor({3, 1}, dtype, Layout::Contiguous, device);
      column.copy_(make_tensor({1}, {}, dtype, device));
      check_tensor(column, {3, 1}, dtype, {1, 1, 1});
    }
    Tensor empty = bp::empty({0, 5}, bp::kFloat32, device);
    empty.copy_(bp::zeros({0, 5}, bp::kInt32, device));
    check_tensor(empty, {0, 5}, bp::kFloat32, {});
  }
}

TEST_CASE("copy_ keeps NaN and infinities between floating dtypes") {
  const double nan = std::nan(""), inf = INFINITY;
  for (const Device device : test_devices()) {
    for (const DType from : floating_dtypes()) {
      for (const DType to : floating_dtypes()) {
        INFO("device " << device.str() << " " << name_of(from) << " -> " << name_of(to));
        check_tensor(make_tensor({nan, inf, -inf, -0.0, 0.125}, {5}, from, device).to(to), {5}, to,
                     {nan, inf, -inf, -0.0, 0.125});
      }
    }
  }
}

TEST_CASE("fill_ writes a Scalar of any kind into every dtype and layout") {
  struct FillCase {
    bp::Scalar value;
    double as_number;
  };
  const FillCase cases[] = {
      {bp::Scalar(3), 3}, {bp::Scalar(2.5), 2.5}, {bp::Scalar(true), 1}, {bp::Scalar(0), 0}};
  for (const Device device : test_devices()) {
    INFO("device " << device.str());
    for (const DType dtype : declared_dtypes<kernel_dtypes::fill__Scalar>()) {
      for (const Layout layout : kWritableLayouts) {
        for (const FillCase& c : cases) {
          INFO(name_of(dtype) << " " << name_of(layout) << " value " << c.as_number);
          Tensor t = empty_tensor({3, 2}, dtype, layout, device);
          t.fill_(c.value);
          check_tensor(t, {3, 2}, dtype, Values(6, converted(dtype, c.as_number)));
        }
      }
      INFO(name_of(dtype) << " function form, 0-dim and empty");
      Tensor scalar = bp::empty({}, dtype, device);
      bp::fill_(scalar, 1);
      check_tensor(scalar, {}, dtype, {1});
      Tensor empty = bp::empty({0}, dtype, device);
      bp::fill_(empty, 1);
      check_tensor(empty, {0}, dtype, {});
    }
  }
}

TEST_CASE("cat along any dim, of any layouts, promoting mixed dtypes") {
  for (const Device device : test_devices()) {
    INFO("device " << device.str());
    for (const DType dtype : declared_dtypes<kernel_dtypes::cat_out>()) {
      for (const int64_t dim : {0, 1, -1}) {
        for (const Layout layout : kAllLayouts) {
          INFO(name_of(dtype) << " dim " << dim << " " << name_of(layout));
          const int64_t d = dim < 0 ? dim + 2 : dim;
          Shape first_shape = {2, 3}, second_shape = {2, 3}, third_shape = {2, 3};
          first_shape[static_cast<size_t>(d)] = 1;
          third_shape[static_cast<size_t>(d)] = 4;
          const Tensor first = sample_tensor(first_shape, dtype, layout, 92, device);
          const Tensor second = sample_tensor(second_shape, dtype, Layout::Transposed, 93, device);
          const Tensor third = sample_tensor(third_shape, dtype, Layout::Sliced, 94, device);
          Shape result_shape = {2, 3};
          result_shape[static_cast<size_t>(d)] = first_shape[d] + second_shape[d] + third_shape[d];
          const Values expected = cat_reference({{values_of(first), first_shape},
                                                 {values_of(second), second_shape},
                                                 {values_of(third), third_shape}},
                                                d);
          check_tensor(bp::cat({first, second, third}, dim), result_shape, dtype, expected);
          Tensor out = empty_tensor(result_shape, dtype, Layout::Transposed, device);
          bp::cat_out(out, {first, second, third}, dim);
          check_tensor(out, result_shape, dtype, expected);
        }
      }
    }
    INFO("mixed dtypes promote; empty inputs contribute nothing");
    const Tensor ints = make_tensor({1, 2}, {2}, bp::kInt32, device);
    const Tensor floats = make_tensor({0.5}, {1}, bp::kFloat64, device);
    check_tensor(bp::cat({ints, floats}), {3}, bp::kFloat64, {1, 2, 0.5});
    check_tensor(
        bp::cat({bp::zeros({0}, bp::kInt32, device), ints, bp::zeros({0}, bp::kInt32, device)}),
        {2}, bp::kInt32, {1, 2});
    const Tensor matrix = make_tensor({1, 2, 3, 4}, {2, 2}, bp::kFloat32, device);
    check_tensor(bp::cat({matrix, bp::zeros({0, 2}, bp::kFloat32, device)}), {2, 2}, bp::kFloat32,
                 {1, 2, 3, 4});
    check_tensor(bp::cat({matrix}, 1), {2, 2}, bp::kFloat32, {1, 2, 3, 4});
  }
}

TEST_CASE("arange: start + i * step for every numeric dtype, negative and fractional steps") {
  struct ArangeCase {
    bp::Scalar start, end, step;
    Values expected;
  };
  const ArangeCase integer_cases[] = {{0, 5, 1, {0, 1, 2, 3, 4}},
                                      {10, 0, -3, {10, 7, 4, 1}},
                                      {2, 2, 1, {}},
                                      {-3, 3, 2, {-3, -1, 1}}};
  const ArangeCase floating_cases[] = {{0.0, 1.0, 0.25, {0, 0.25, 0.5, 0.75}},
                                       {1.5, -1.0, -0.5, {1.5, 1, 0.5, 0, -0.5}}};
  for (const Device device : test_devices()) {
    INFO("device " << device.str());
    for (const DType dtype : declared_dtypes<kernel_dtypes::arange_start_out>()) {
      const bool is_unsigned = dtype == bp::kUInt8;
      for (const ArangeCase& c : integer_cases) {
        if (is_unsigned && c.start.to<int64_t>() < 0) continue;
        INFO(name_of(dtype) << " arange(" << c.start.to<double>() << ", " << c.end.to<double>()
                            << ", " << c.step.to<double>() << ")");
        check_tensor(bp::arange(c.start, c.end, c.step, dtype, device),
                     {static_cast<int64_t>(c.expected.size())}, dtype, c.expected);
      }
      if (!bp::is_floating_point(dtype)) continue;
      for (const ArangeCase& c : floating_cases) {
        INFO(name_of(dtype) << " arange(" << c.start.to<double>() << ", " << c.end.to<double>()
                            << ", " << c.step.to<double>() << ")");
        check_tensor(bp::arange(c.start, c.end, c.step, dtype, device),
                     {static_cast<int64_t>(c.expected.size())}, dtype, c.expected);
      }
    }
    INFO("out= and the one-argument form; values computed from the index, not accumulated");
    Tensor out = bp::empty({4}, bp::kInt64, device);
    bp::arange_out(out, 1, 9, 2);
    check_tensor(out, {4}, bp::kInt64, {1, 3, 5, 7});
    check_tensor(bp::arange(3, std::nullopt, device), {3}, bp::kInt64, {0, 1, 2});
    const Values tenths = values_of(bp::arange(0.0, 1000.0, 0.1, bp::kFloat64, device));
    REQUIRE(tenths.size() >= 9999);
    CHECK(tenths.back() == static_cast<double>(tenths.size() - 1) * 0.1);

    INFO(
        "start + i * step rounds the product, then the sum, bit for bit as the CPU backend does "
        "(one fused multiply-add would round once, and differ in the last bit for many values)");
    const double start = 0.1, step = 0.3;  // neither exact in binary
    const Values steps = values_of(bp::arange(start, 1000.0, step, bp::kFloat64, device));
    REQUIRE(steps.size() >= 3333);
    size_t differing = 0;
    for (size_t i = 0; i < steps.size(); ++i)
      differing += steps[i] != start + static_cast<double>(i) * step;
    CHECK(differing == 0);
  }
}

}  // namespace optest
