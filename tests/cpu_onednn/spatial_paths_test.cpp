// conv2d, pooling and batch_norm at sizes where the cpu backend's oneDNN paths matter, against
// the plugin's float64 loops (an independent path): many channels, groups, dilation, strided
// inputs, 16-bit dtypes converted per image, average windows that oneDNN cannot express, and
// NaN and -inf in max pooling, which oneDNN's max treats differently from PyTorch.
#include "op_test_support.h"

#include <cmath>
#include <limits>
#include <optional>
#include <string>

namespace optest {
namespace {

// `op` on float64 copies of the inputs, converted back to `dtype` on the host.
Values float64_result(const std::function<Tensor(const std::vector<Tensor>&)>& op,
                      const std::vector<Tensor>& inputs) {
  std::vector<Tensor> converted;
  for (const Tensor& input : inputs) converted.push_back(input.to(bp::kFloat64));
  return values_of(op(converted));
}

struct ConvCase {
  Shape input, weight;
  int64_t stride, padding, dilation, groups;
};

}  // namespace

TEST_CASE("conv2d through oneDNN agrees with the float64 loops for ResNet-like layers") {
  const ConvCase cases[] = {
      {{2, 16, 15, 13}, {32, 16, 3, 3}, 1, 1, 1, 1}, {{1, 3, 33, 33}, {24, 3, 7, 7}, 2, 3, 1, 1},
      {{2, 32, 9, 9}, {64, 32, 1, 1}, 2, 0, 1, 1},   {{1, 24, 12, 12}, {24, 3, 3, 3}, 1, 2, 2, 8},
      {{1, 32, 10, 10}, {32, 1, 3, 3}, 2, 1, 1, 32},
  };
  for (const ConvCase& c : cases) {
    for (const DType dtype : {bp::kFloat32, bp::kFloat16, bp::kBFloat16}) {
      for (const Layout layout : {Layout::Contiguous, Layout::Sliced}) {
        INFO(name_of(dtype) << " " << name_of(layout) << " input " << shape_string(c.input)
                            << " weight " << shape_string(c.weight) << " groups " << c.groups);
        const Tensor input = sample_tensor(c.input, dtype, layout, 401);
        const Tensor weight = sample_tensor(c.weight, dtype, Layout::Contiguous, 402);
        const Tensor bias = sample_tensor({c.weight[0]}, dtype, Layout::Contiguous, 403);
        const auto conv = [&](const std::vector<Tensor>& t) {
          return bp::conv2d(t[0], t[1], t[2], c.stride, c.padding, c.dilation, c.groups);
        };
        const Tensor result = conv({input, weight, bias});
        check_tensor(result, shape_of(result), dtype, float64_result(conv, {input, weight, bias}));
      }
    }
  }
}

TEST_CASE("pooling through oneDNN agrees with the float64 loops, and oneDNN's gaps are covered") {
  const Shape shape = {2, 16, 17, 15};
  for (const Layout layout : {Layout::Contiguous, Layout::Transposed}) {
    INFO(name_of(layout));
    const Tensor input = sample_tensor(shape, bp::kFloat32, layout, 411);
    const auto check = [&](const std::string& what,
                           const std::function<Tensor(const Tensor&)>& op) {
      INFO(what);
      const Tensor result = op(input);
      check_tensor(result, shape_of(result), bp::kFloat32,
                   float64_result([&](const std::vector<Tensor>& t) { return op(t[0]); }, {input}));
    };
    check("max 3x3/2 pad 1", [](const Tensor& x) { return bp::max_pool2d(x, {3}, {2}, {1}); });
    check("max 3x3/2 pad 1 ceil",
          [](const Tensor& x) { return bp::max_pool2d(x, {3}, {2}, {1}, {1}, true); });
    check("max dilated", [](const Tensor& x) { return bp::max_pool2d(x, {3}, {1}, {1}, {2}); });
    check("avg including padding",
          [](const Tensor& x) { return bp::avg_pool2d(x, {3}, {2}, {1}); });
    // ceil_mode adds windows that run past the padding: PyTorch divides by less than 3x3 there.
    check("avg including padding, ceil",
          [](const Tensor& x) { return bp::avg_pool2d(x, {3}, {2}, {1}, true, true); });
    check("avg excluding padding, ceil",
          [](const Tensor& x) { return bp::avg_pool2d(x, {3}, {2}, {1}, true, false); });
    check("avg with divisor_override",
          [](const Tensor& x) { return bp::avg_pool2d(x, {2}, {2}, {1}, false, true, 5); });
    check("adaptive, evenly tiled", [](const Tensor& x) {
      return bp::adaptive_avg_pool2d(x.slice(2, 0, 15), {5, 3});
    });
    check("adaptive, overlapping", [](const Tensor& x) {
      return bp::adaptive_avg_pool2d(x, {4, 6});
    });
    check("global average", [](const Tensor& x) { return bp::adaptive_avg_pool2d(x, {1}); });
  }
}

TEST_CASE("max_pool2d gives NaN for every window holding one and -inf for windows of -inf") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const Shape shape = {1, 8, 9, 9};
  Values values = sample_values(numel_of(shape), bp::kFloat32, 421);
  values[40] = nan;                                    // channel 0, row 4, column 4
  for (size_t i = 81; i < 162; ++i) values[i] = -inf;  // all of channel 1
  values[162 + 80] = nan;                              // channel 2's last element
  for (const DType dtype : {bp::kFloat32, bp::kFloat16, bp::kBFloat16}) {
    INFO(name_of(dtype));
    const Tensor input = make_tensor(values, shape, dtype);
    for (const int64_t dilation : {1, 2}) {
      const auto pool = [&](const Tensor& x) {
        return bp::max_pool2d(x, {3}, {2}, {1}, {dilation}, true);
      };
      const Tensor result = pool(input);
      check_tensor(result, shape_of(result), dtype, values_of(pool(input.to(bp::kFloat64))));
    }
  }
}

TEST_CASE("batch_norm inference in float32 and the 16-bit dtypes agrees with float64, 2-D to 5-D") {
  const Shape shapes[] = {{4, 24}, {2, 24, 7}, {2, 24, 5, 6}, {1, 24, 3, 4, 5}};
  for (const Shape& shape : shapes) {
    for (const DType dtype : {bp::kFloat32, bp::kFloat16, bp::kBFloat16}) {
      for (const bool affine : {false, true}) {
        INFO(name_of(dtype) << " " << shape_string(shape) << (affine ? " with" : " without")
                            << " weight and bias");
        const Tensor x = sample_tensor(shape, dtype, Layout::Transposed, 431);
        const Tensor mean = sample_tensor({24}, dtype, Layout::Sliced, 432);
        const Tensor var =
            bp::add(bp::abs(sample_tensor({24}, dtype, Layout::Contiguous, 433)), 0.25);
        const Tensor weight = sample_tensor({24}, dtype, Layout::Contiguous, 434);
        const Tensor bias = sample_tensor({24}, dtype, Layout::Sliced, 435);
        const auto norm = [&](const std::vector<Tensor>& t) {
          return bp::batch_norm_inference(t[0], affine ? std::optional<Tensor>(t[3]) : std::nullopt,
                                          affine ? std::optional<Tensor>(t[4]) : std::nullopt, t[1],
                                          t[2], 1e-5);
        };
        check_tensor(norm({x, mean, var, weight, bias}), shape, dtype,
                     float64_result(norm, {x, mean, var, weight, bias}));
      }
    }
  }
}

}  // namespace optest
