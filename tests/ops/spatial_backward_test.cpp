// The backward ops of conv2d and the 2-D pooling ops, and max pooling with indices, against
// direct loops in double: every stride, padding, dilation and groups that changes which input
// elements a window reads, ceil_mode windows, both count_include_pad rules and
// divisor_override, over non-contiguous gradients and inputs.
#include "op_test_support.h"

#include <cmath>
#include <limits>

namespace optest {
namespace {

struct Pair {
  int64_t h, w;
};

// Row-major offset of (n, c, y, x) in an (N, C, H, W) shape.
size_t offset(const Shape& s, int64_t n, int64_t c, int64_t y, int64_t x) {
  return static_cast<size_t>(((n * s[1] + c) * s[2] + y) * s[3] + x);
}

int64_t window_count(int64_t size, int64_t kernel, int64_t stride, int64_t padding,
                     int64_t dilation, bool ceil_mode) {
  const int64_t room =
      size + 2 * padding - dilation * (kernel - 1) - 1 + (ceil_mode ? stride - 1 : 0);
  int64_t out = room / stride + 1;
  if (ceil_mode && (out - 1) * stride >= size + padding) --out;
  return out;
}

// --- convolution_backward ----------------------------------------------------------------------

struct ConvCase {
  Shape input;   // N, C, H, W
  Shape weight;  // C_out, C_in / groups, kH, kW
  Pair stride, padding, dilation;
  int64_t groups;
};

const ConvCase kConvCases[] = {
    {{2, 3, 7, 6}, {5, 3, 3, 3}, {1, 1}, {0, 0}, {1, 1}, 1},  // plain
    {{1, 4, 9, 8}, {6, 4, 3, 3}, {2, 2}, {1, 1}, {1, 1}, 1},  // stride and padding
    {{1, 3, 9, 9}, {4, 3, 3, 2}, {1, 2}, {2, 0}, {2, 3}, 1},  // per-dim stride, padding, dilation
    {{2, 6, 5, 5}, {9, 2, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 3},  // groups
    {{1, 5, 6, 7}, {5, 1, 3, 3}, {2, 1}, {1, 1}, {1, 1}, 5},  // depthwise
    {{3, 2, 1, 1}, {7, 2, 1, 1}, {1, 1}, {0, 0}, {1, 1}, 1},  // 1x1 images and kernel
    {{1, 3, 2, 3}, {2, 3, 5, 5}, {2, 2}, {2, 2}, {1, 1}, 1},  // kernel larger than the input
    {{0, 3, 4, 4}, {2, 3, 3, 3}, {1, 1}, {0, 0}, {1, 1}, 1},  // empty batch: zero gradients
};

// The gradients, and the sums of the magnitudes of the terms each one adds: a sum that cancels
// to a small value keeps the rounding errors of its large terms, whatever the order.
struct ConvGradients {
  Values input, weight, bias;
  Values input_magnitude, weight_magnitude, bias_magnitude;
};

ConvGradients conv_backward_reference(const Values& grad, const Shape& grad_shape,
                                      const Values& input, const Values& weight,
                                      const ConvCase& c) {
  ConvGradients out{Values(input.size(), 0.0),
                    Values(weight.size(), 0.0),
                    Values(static_cast<size_t>(c.weight[0]), 0.0),
                    Values(input.size(), 0.0),
                    Values(weight.size(), 0.0),
                    Values(static_cast<size_t>(c.weight[0]), 0.0)};
  const int64_t group_out = c.weight[0] / c.groups, group_in = c.weight[1];
  for (int64_t n = 0; n < grad_shape[0]; ++n) {
    for (int64_t co = 0; co < grad_shape[1]; ++co) {
      for (int64_t y = 0; y < grad_shape[2]; ++y) {
        for (int64_t x = 0; x < grad_shape[3]; ++x) {
          const double g = grad[offset(grad_shape, n, co, y, x)];
          out.bias[static_cast<size_t>(co)] += g;
          out.bias_magnitude[static_cast<size_t>(co)] += std::abs(g);
          for (int64_t ci = 0; ci < group_in; ++ci) {
            const int64_t channel = (co / group_out) * group_in + ci;
            for (int64_t ky = 0; ky < c.weight[2]; ++ky) {
              for (int64_t kx = 0; kx < c.weight[3]; ++kx) {
                const int64_t iy = y * c.stride.h - c.padding.h + ky * c.dilation.h;
                const int64_t ix = x * c.stride.w - c.padding.w + kx * c.dilation.w;
                if (iy < 0 || iy >= c.input[2] || ix < 0 || ix >= c.input[3]) continue;
                const size_t in_at = offset(c.input, n, channel, iy, ix);
                const size_t weight_at = offset(c.weight, co, ci, ky, kx);
                out.input[in_at] += g * weight[weight_at];
                out.weight[weight_at] += g * input[in_at];
                out.input_magnitude[in_at] += std::abs(g * weight[weight_at]);
                out.weight_magnitude[weight_at] += std::abs(g * input[in_at]);
              }
            }
          }
        }
      }
    }
  }
  return out;
}

// --- pooling -----------------------------------------------------------------------------------

struct PoolCase {
  Shape input;
  Pair kernel, stride, padding, dilation;
  bool ceil_mode;
};

const PoolCase kPoolCases[] = {
    {{2, 3, 6, 6}, {2, 2}, {2, 2}, {0, 0}, {1, 1}, false},
    {{1, 5, 7, 9}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, false},  // overlapping windows, padding
    {{1, 5, 7, 9}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, true},   // ceil_mode adds a partial window
    {{1, 2, 8, 5}, {3, 2}, {1, 2}, {1, 0}, {1, 1}, true},
    {{2, 3, 9, 9}, {3, 3}, {1, 1}, {1, 1}, {2, 2}, false},  // dilation (max pooling only)
    {{1, 1, 1, 1}, {2, 2}, {2, 2}, {1, 1}, {1, 1}, true},   // window larger than the input
    {{1, 1, 3, 3}, {4, 4}, {4, 4}, {0, 0}, {1, 1}, true},   // only a partial window
};

std::string describe(const PoolCase& p) {
  return "input " + shape_string(p.input) + " kernel " + std::to_string(p.kernel.h) + "x" +
         std::to_string(p.kernel.w) + " stride " + std::to_string(p.stride.h) + "x" +
         std::to_string(p.stride.w) + " padding " + std::to_string(p.padding.h) + "x" +
         std::to_string(p.padding.w) + " dilation " + std::to_string(p.dilation.h) + "x" +
         std::to_string(p.dilation.w) + (p.ceil_mode ? " ceil_mode" : "");
}

Shape pooled_shape(const PoolCase& p) {
  return {p.input[0], p.input[1],
          window_count(p.input[2], p.kernel.h, p.stride.h, p.padding.h, p.dilation.h, p.ceil_mode),
          window_count(p.input[3], p.kernel.w, p.stride.w, p.padding.w, p.dilation.w, p.ceil_mode)};
}

// Calls visit(n, c, y, x, taps, padded_area) for every output element, where taps are the
// flat plane indices (iy * W + ix) its window reads inside the input, in order.
template <typename Visit>
void for_each_window(const PoolCase& p, const Shape& out, Visit visit) {
  const int64_t height = p.input[2], width = p.input[3];
  for (int64_t n = 0; n < out[0]; ++n) {
    for (int64_t c = 0; c < out[1]; ++c) {
      for (int64_t y = 0; y < out[2]; ++y) {
        for (int64_t x = 0; x < out[3]; ++x) {
          const int64_t y0 = y * p.stride.h - p.padding.h, x0 = x * p.stride.w - p.padding.w;
          const int64_t padded_area = (std::min(y0 + p.kernel.h, height + p.padding.h) - y0) *
                                      (std::min(x0 + p.kernel.w, width + p.padding.w) - x0);
          std::vector<int64_t> taps;
          for (int64_t ky = 0; ky < p.kernel.h; ++ky) {
            for (int64_t kx = 0; kx < p.kernel.w; ++kx) {
              const int64_t iy = y0 + ky * p.dilation.h, ix = x0 + kx * p.dilation.w;
              if (iy >= 0 && iy < height && ix >= 0 && ix < width) {
                taps.push_back(iy * width + ix);
              }
            }
          }
          visit(n, c, y, x, taps, padded_area);
        }
      }
    }
  }
}

size_t plane_offset(const Shape& s, int64_t n, int64_t c) {
  return static_cast<size_t>((n * s[1] + c) * s[2] * s[3]);
}

}  // namespace

TEST_CASE(
    "convolution_backward matches direct loops for every stride, padding, dilation and "
    "groups") {
  for (const Device device : test_devices("convolution_backward.out")) {
    INFO("device " << device.str());
    for (const DType dtype : declared_dtypes<kernel_dtypes::convolution_backward_out>()) {
      for (const ConvCase& c : kConvCases) {
        for (const Layout layout : kWritableLayouts) {
          INFO(name_of(dtype) << " " << name_of(layout) << " input " << shape_string(c.input)
                              << " weight " << shape_string(c.weight) << " groups " << c.groups);
          const Tensor input = sample_tensor(c.input, dtype, layout, 401, device);
          const Tensor weight = sample_tensor(c.weight, dtype, Layout::Transposed, 402, device);
          const Shape grad_shape = shape_of(
              bp::conv2d(input, weight, std::nullopt, {c.stride.h, c.stride.w},
                         {c.padding.h, c.padding.w}, {c.dilation.h, c.dilation.w}, c.groups));
          const Tensor grad = sample_tensor(grad_shape, dtype, layout, 403, device);
          const ConvGradients expected = conv_backward_reference(
              values_of(grad), grad_shape, values_of(input), values_of(weight), c);
          const auto [grad_input, grad_weight, grad_bias] = bp::convolution_backward(
              grad, input, weight, {c.stride.h, c.stride.w}, {c.padding.h, c.padding.w},
              {c.dilation.h, c.dilation.w}, c.groups);
          const auto cancellation = [&](const Values& magnitudes) {
            Values tolerances;
            for (const double m : magnitudes)
              tolerances.push_back(cancellation_tolerance(dtype, m));
            return tolerances;
          };
          check_tensor(grad_input, c.input, dtype, expected.input,
                       cancellation(expected.input_magnitude));
          check_tensor(grad_weight, c.weight, dtype, expected.weight,
                       cancellation(expected.weight_magnitude));
          check_tensor(grad_bias, {c.weight[0]}, dtype, expected.bias,
                       cancellation(expected.bias_magnitude));
        }
      }
    }
  }
}

TEST_CASE("max_pool2d_with_indices gives max_pool2d's output and where each maximum is") {
  for (const Device device : test_devices("max_pool2d_with_indices.out")) {
    INFO("device " << device.str());
    for (const DType dtype : declared_dtypes<kernel_dtypes::max_pool2d_with_indices_out>()) {
      for (const PoolCase& p : kPoolCases) {
        for (const Layout layout : kAllLayouts) {
          INFO(name_of(dtype) << " " << name_of(layout) << " " << describe(p));
          const Tensor input = sample_tensor(p.input, dtype, layout, 411, device);
          const Values in = values_of(input);
          const Shape out_shape = pooled_shape(p);
          Values maxima, indices;
          // The first of equal maxima, as PyTorch picks it; the first tap when none beats -inf.
          for_each_window(p, out_shape,
                          [&](int64_t n, int64_t c, int64_t, int64_t,
                              const std::vector<int64_t>& taps, int64_t) {
                            const size_t plane = plane_offset(p.input, n, c);
                            double best = -std::numeric_limits<double>::infinity();
                            int64_t where = taps.front();
                            for (int64_t tap : taps) {
                              const double v = in[plane + static_cast<size_t>(tap)];
                              if (v > best || std::isnan(v)) best = v, where = tap;
                            }
                            maxima.push_back(best);
                            indices.push_back(static_cast<double>(where));
                          });
          const auto [out, index] = bp::max_pool2d_with_indices(
              input, {p.kernel.h, p.kernel.w}, {p.stride.h, p.stride.w}, {p.padding.h, p.padding.w},
              {p.dilation.h, p.dilation.w}, p.ceil_mode);
          check_tensor(out, out_shape, dtype, maxima);
          check_tensor(index, out_shape, bp::kInt64, indices);

          const Tensor grad = sample_tensor(out_shape, dtype, Layout::Transposed, 412, device);
          const Values g = values_of(grad);
          Values expected(in.size(), 0.0);
          for (size_t i = 0; i < g.size(); ++i) {
            const size_t plane_size = static_cast<size_t>(p.input[2] * p.input[3]);
            const size_t plane = i / static_cast<size_t>(out_shape[2] * out_shape[3]);
            expected[plane * plane_size + static_cast<size_t>(indices[i])] += g[i];
          }
          check_tensor(bp::max_pool2d_with_indices_backward(
                           grad, input, {p.kernel.h, p.kernel.w}, {p.stride.h, p.stride.w},
                           {p.padding.h, p.padding.w}, {p.dilation.h, p.dilation.w}, p.ceil_mode,
                           index),
                       p.input, dtype, expected);
        }
      }
    }
  }
}

TEST_CASE("max_pool2d_with_indices points at NaN and at the first tap of a window of -inf") {
  for (const Device device : test_devices("max_pool2d_with_indices.out")) {
    const double inf = std::numeric_limits<double>::infinity();
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const Tensor input =
        make_tensor({-inf, -inf, 1, nan, 2, 2, 3, 1}, {1, 2, 2, 2}, bp::kFloat32, device);
    const auto [out, index] = bp::max_pool2d_with_indices(input, {1, 2});
    check_tensor(out, {1, 2, 2, 1}, bp::kFloat32, {-inf, nan, 2, 3});
    check_tensor(index, {1, 2, 2, 1}, bp::kInt64, {0, 3, 0, 2});
    check_error(
        [&] {
          bp::max_pool2d_with_indices_backward(
              bp::ones({1, 2, 2, 1}, bp::kFloat32, device), input, {1, 2}, {1, 2}, {0}, {1}, false,
              make_tensor({0, 4, 0, 0}, {1, 2, 2, 1}, bp::kInt64, device));
        },
        "index 4 lies outside an input plane of 4 elements");
  }
}

TEST_CASE("avg_pool2d_backward spreads each gradient over its window, with every divisor rule") {
  for (const Device device : test_devices("avg_pool2d_backward.grad_input")) {
    INFO("device " << device.str());
    for (const DType dtype : declared_dtypes<kernel_dtypes::avg_pool2d_backward_grad_input>()) {
      for (const PoolCase& p : kPoolCases) {
        if (p.dilation.h != 1 || p.dilation.w != 1) continue;  // avg_pool2d has no dilation
        for (const bool count_include_pad : {false, true}) {
          for (const std::optional<int64_t> divisor : {std::optional<int64_t>{}, {3}}) {
            INFO(name_of(dtype) << " " << describe(p) << " count_include_pad " << count_include_pad
                                << " divisor_override " << divisor.value_or(0));
            const Tensor input = sample_tensor(p.input, dtype, Layout::Sliced, 421, device);
            const Shape out_shape = pooled_shape(p);
            const Tensor grad = sample_tensor(out_shape, dtype, Layout::Transposed, 422, device);
            const Values g = values_of(grad);
            Values expected(values_of(input).size(), 0.0);
            size_t at = 0;
            for_each_window(p, out_shape,
                            [&](int64_t n, int64_t c, int64_t, int64_t,
                                const std::vector<int64_t>& taps, int64_t padded_area) {
                              const double d = divisor ? static_cast<double>(*divisor)
                                               : count_include_pad
                                                   ? static_cast<double>(padded_area)
                                                   : static_cast<double>(taps.size());
                              for (int64_t tap : taps) {
                                expected[plane_offset(p.input, n, c) + static_cast<size_t>(tap)] +=
                                    g[at] / d;
                              }
                              ++at;
                            });
            check_tensor(bp::avg_pool2d_backward(
                             grad, input, {p.kernel.h, p.kernel.w}, {p.stride.h, p.stride.w},
                             {p.padding.h, p.padding.w}, p.ceil_mode, count_include_pad, divisor),
                         p.input, dtype, expected);
          }
        }
      }
    }
  }
}

TEST_CASE(
    "_adaptive_avg_pool2d_backward spreads each gradient over PyTorch's overlapping "
    "windows") {
  const Shape input_shape = {2, 3, 7, 5};
  for (const Device device : test_devices("_adaptive_avg_pool2d_backward.out")) {
    INFO("device " << device.str());
    for (const DType dtype : declared_dtypes<kernel_dtypes::_adaptive_avg_pool2d_backward_out>()) {
      for (const Shape& out_size : {Shape{3, 2}, Shape{7, 5}, Shape{1, 1}, Shape{4, 4}}) {
        INFO(name_of(dtype) << " output size " << shape_string(out_size));
        const Tensor input = sample_tensor(input_shape, dtype, Layout::Transposed, 431, device);
        const Shape out_shape = {2, 3, out_size[0], out_size[1]};
        const Tensor grad = sample_tensor(out_shape, dtype, Layout::Sliced, 432, device);
        const Values g = values_of(grad);
        Values expected(static_cast<size_t>(numel_of(input_shape)), 0.0);
        for (int64_t n = 0; n < 2; ++n) {
          for (int64_t c = 0; c < 3; ++c) {
            for (int64_t y = 0; y < out_size[0]; ++y) {
              const int64_t y0 = y * 7 / out_size[0],
                            y1 = ((y + 1) * 7 + out_size[0] - 1) / out_size[0];
              for (int64_t x = 0; x < out_size[1]; ++x) {
                const int64_t x0 = x * 5 / out_size[1],
                              x1 = ((x + 1) * 5 + out_size[1] - 1) / out_size[1];
                const double share =
                    g[offset(out_shape, n, c, y, x)] / static_cast<double>((y1 - y0) * (x1 - x0));
                for (int64_t iy = y0; iy < y1; ++iy) {
                  for (int64_t ix = x0; ix < x1; ++ix) {
                    expected[offset(input_shape, n, c, iy, ix)] += share;
                  }
                }
              }
            }
          }
        }
        check_tensor(bp::_adaptive_avg_pool2d_backward(grad, input), input_shape, dtype, expected);
      }
    }
  }
}

}  // namespace optest
