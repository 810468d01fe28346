// conv2d and the 2-D pooling ops against direct loops in double: every combination of stride,
// padding, dilation and groups that changes which input elements a window reads, odd channel
// counts, 1x1 images, windows larger than their input, and non-contiguous inputs.
#include "op_test_support.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace optest {
namespace {

struct Pair {
  int64_t h, w;
};

struct ConvCase {
  Shape input;   // N, C, H, W
  Shape weight;  // C_out, C_in / groups, kH, kW
  Pair stride, padding, dilation;
  int64_t groups;
};

int64_t window_count(int64_t size, int64_t kernel, int64_t stride, int64_t padding,
                     int64_t dilation) {
  return (size + 2 * padding - dilation * (kernel - 1) - 1) / stride + 1;
}

// Row-major (N, C, H, W) element at (n, c, y, x).
double at(const Values& v, const Shape& s, int64_t n, int64_t c, int64_t y, int64_t x) {
  return v[static_cast<size_t>(((n * s[1] + c) * s[2] + y) * s[3] + x)];
}

Values conv2d_reference(const Values& input, const Values& weight, const Values* bias,
                        const ConvCase& c, Shape& out_shape) {
  const int64_t n_count = c.input[0], height = c.input[2], width = c.input[3];
  const int64_t out_channels = c.weight[0], group_in = c.weight[1];
  const int64_t kh = c.weight[2], kw = c.weight[3];
  const int64_t oh = window_count(height, kh, c.stride.h, c.padding.h, c.dilation.h);
  const int64_t ow = window_count(width, kw, c.stride.w, c.padding.w, c.dilation.w);
  out_shape = {n_count, out_channels, oh, ow};
  Values out;
  const int64_t group_out = out_channels / c.groups;
  for (int64_t n = 0; n < n_count; ++n) {
    for (int64_t co = 0; co < out_channels; ++co) {
      const int64_t first_in = (co / group_out) * group_in;
      for (int64_t y = 0; y < oh; ++y) {
        for (int64_t x = 0; x < ow; ++x) {
          double sum = bias ? (*bias)[static_cast<size_t>(co)] : 0.0;
          for (int64_t ci = 0; ci < group_in; ++ci) {
            for (int64_t ky = 0; ky < kh; ++ky) {
              for (int64_t kx = 0; kx < kw; ++kx) {
                const int64_t iy = y * c.stride.h - c.padding.h + ky * c.dilation.h;
                const int64_t ix = x * c.stride.w - c.padding.w + kx * c.dilation.w;
                if (iy < 0 || iy >= height || ix < 0 || ix >= width) continue;
                sum += at(input, c.input, n, first_in + ci, iy, ix) *
                       at(weight, c.weight, co, ci, ky, kx);
              }
            }
          }
          out.push_back(sum);
        }
      }
    }
  }
  return out;
}

const ConvCase kConvCases[] = {
    {{2, 3, 7, 6}, {5, 3, 3, 3}, {1, 1}, {0, 0}, {1, 1}, 1},    // plain, 3 and 5 channels
    {{1, 4, 9, 8}, {6, 4, 3, 3}, {2, 2}, {1, 1}, {1, 1}, 1},    // stride and padding
    {{1, 3, 9, 9}, {4, 3, 3, 2}, {1, 2}, {2, 0}, {2, 3}, 1},    // per-dim stride, padding, dilation
    {{2, 6, 5, 5}, {9, 2, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 3},    // groups
    {{1, 5, 6, 7}, {5, 1, 3, 3}, {2, 1}, {1, 1}, {1, 1}, 5},    // depthwise
    {{3, 2, 1, 1}, {7, 2, 1, 1}, {1, 1}, {0, 0}, {1, 1}, 1},    // 1x1 images, 1x1 kernel
    {{1, 2, 1, 1}, {3, 2, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 1},    // 1x1 image, 3x3 kernel, padding
    {{1, 3, 2, 3}, {2, 3, 5, 5}, {2, 2}, {2, 2}, {1, 1}, 1},    // kernel larger than the input
    {{1, 9, 10, 4}, {11, 9, 1, 4}, {3, 1}, {0, 1}, {1, 1}, 1},  // channels not a multiple of 8
    {{0, 3, 4, 4}, {2, 3, 3, 3}, {1, 1}, {0, 0}, {1, 1}, 1},    // empty batch
    // Channels in multiples of 8, as cuDNN's NHWC tensor-core kernels take them (the CUDA
    // backend's channels-last formulation): plain, grouped and dilated, a 1x1 expansion.
    {{2, 16, 8, 8}, {16, 16, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 1},
    {{1, 16, 7, 9}, {24, 4, 3, 3}, {1, 2}, {1, 1}, {2, 1}, 4},
    {{3, 8, 6, 5}, {32, 8, 1, 1}, {1, 1}, {0, 0}, {1, 1}, 1},
};

std::string describe(const ConvCase& c) {
  return "input " + shape_string(c.input) + " weight " + shape_string(c.weight) + " stride " +
         std::to_string(c.stride.h) + "x" + std::to_string(c.stride.w) + " padding " +
         std::to_string(c.padding.h) + "x" + std::to_string(c.padding.w) + " dilation " +
         std::to_string(c.dilation.h) + "x" + std::to_string(c.dilation.w) + " groups " +
         std::to_string(c.groups);
}

// --- pooling -----------------------------------------------------------------------------------

struct PoolCase {
  Shape input;
  Pair kernel, stride, padding, dilation;
  bool ceil_mode;
};

const PoolCase kPoolCases[] = {
    {{2, 3, 6, 6}, {2, 2}, {2, 2}, {0, 0}, {1, 1}, false},
    {{1, 5, 7, 9}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, false},
    {{1, 5, 7, 9}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, true},  // ceil_mode adds a partial window
    {{1, 2, 8, 5}, {3, 2}, {1, 2}, {1, 0}, {1, 1}, true},
    {{2, 3, 9, 9}, {3, 3}, {1, 1}, {1, 1}, {2, 2}, false},  // dilation (max pooling only)
    {{1, 3, 1, 1}, {1, 1}, {1, 1}, {0, 0}, {1, 1}, false},  // 1x1 image
    {{1, 1, 1, 1}, {2, 2}, {2, 2}, {1, 1}, {1, 1}, true},   // window larger than the input
    // ceil_mode's one partial window where no whole one fits (a row of 5; 3x3 under a 4x4 kernel;
    // a dilated 2x2 kernel over 2x2)
    {{1, 2, 1, 5}, {2, 2}, {2, 2}, {0, 0}, {1, 1}, true},
    {{1, 1, 3, 3}, {4, 4}, {4, 4}, {0, 0}, {1, 1}, true},
    {{1, 1, 2, 2}, {2, 2}, {2, 2}, {0, 0}, {2, 2}, true},
    {{1, 9, 5, 4}, {5, 4}, {5, 4}, {0, 0}, {1, 1}, false},    // one window over the whole image
    {{1, 2, 3, 2}, {17, 17}, {1, 1}, {8, 8}, {1, 1}, false},  // a kernel far wider than the input
};

// PyTorch's pooling_output_shape: a division rounded down, toward -inf.
int64_t pooled_size(int64_t size, int64_t kernel, int64_t stride, int64_t padding, int64_t dilation,
                    bool ceil_mode) {
  const int64_t room =
      size + 2 * padding - dilation * (kernel - 1) - 1 + (ceil_mode ? stride - 1 : 0);
  int64_t out =
      static_cast<int64_t>(std::floor(static_cast<double>(room) / static_cast<double>(stride))) + 1;
  if (ceil_mode && (out - 1) * stride >= size + padding) --out;
  return out;
}

// Calls reduce(values of the window inside the input, window size counted with padding but not
// beyond the padded input) for each output element.
template <typename Reduce>
Values pool_reference(const Values& input, const PoolCase& p, Shape& out_shape, Reduce reduce) {
  const int64_t height = p.input[2], width = p.input[3];
  const int64_t oh =
      pooled_size(height, p.kernel.h, p.stride.h, p.padding.h, p.dilation.h, p.ceil_mode);
  const int64_t ow =
      pooled_size(width, p.kernel.w, p.stride.w, p.padding.w, p.dilation.w, p.ceil_mode);
  out_shape = {p.input[0], p.input[1], oh, ow};
  Values out;
  for (int64_t n = 0; n < p.input[0]; ++n) {
    for (int64_t c = 0; c < p.input[1]; ++c) {
      for (int64_t y = 0; y < oh; ++y) {
        for (int64_t x = 0; x < ow; ++x) {
          const int64_t y0 = y * p.stride.h - p.padding.h, x0 = x * p.stride.w - p.padding.w;
          const int64_t padded_area = (std::min(y0 + p.kernel.h, height + p.padding.h) - y0) *
                                      (std::min(x0 + p.kernel.w, width + p.padding.w) - x0);
          Values window;
          for (int64_t ky = 0; ky < p.kernel.h; ++ky) {
            for (int64_t kx = 0; kx < p.kernel.w; ++kx) {
              const int64_t iy = y0 + ky * p.dilation.h, ix = x0 + kx * p.dilation.w;
              if (iy >= 0 && iy < height && ix >= 0 && ix < width) {
                window.push_back(at(input, p.input, n, c, iy, ix));
              }
            }
          }
          out.push_back(reduce(window, padded_area));
        }
      }
    }
  }
  return out;
}

double max_of(const Values& window, int64_t /*padded_area*/) {
  double best = -std::numeric_limits<double>::infinity();
  for (double v : window) best = std::isnan(v) || v > best ? v : best;
  return best;
}

double sum_of(const Values& window) {
  double sum = 0;
  for (double v : window) sum += v;
  return sum;
}

}  // namespace

TEST_CASE("conv2d matches direct convolution for every stride, padding, dilation and groups") {
  for (const Device device : test_devices("conv2d.out")) {
    INFO("device " << device.str());
    for (const DType dtype : declared_dtypes<kernel_dtypes::conv2d_out>()) {
      for (const ConvCase& c : kConvCases) {
        for (const Layout layout : {Layout::Contiguous, Layout::Transposed, Layout::Sliced}) {
          INFO(name_of(dtype) << " " << name_of(layout) << " " << describe(c));
          const Tensor input = sample_tensor(c.input, dtype, layout, 301, device);
          const Tensor weight = sample_tensor(c.weight, dtype, Layout::Transposed, 302, device);
          const Tensor bias = sample_tensor({c.weight[0]}, dtype, Layout::Sliced, 303, device);
          const Values bias_values = values_of(bias);
          Shape shape;
          const Values with_bias =
              conv2d_reference(values_of(input), values_of(weight), &bias_values, c, shape);
          check_tensor(bp::conv2d(input, weight, bias, {c.stride.h, c.stride.w},
                                  {c.padding.h, c.padding.w}, {c.dilation.h, c.dilation.w},
                                  c.groups),
                       shape, dtype, with_bias);
          const Values without_bias =
              conv2d_reference(values_of(input), values_of(weight), nullptr, c, shape);
          check_tensor(bp::conv2d(input, weight, std::nullopt, {c.stride.h, c.stride.w},
                                  {c.padding.h, c.padding.w}, {c.dilation.h, c.dilation.w},
                                  c.groups),
                       shape, dtype, without_bias);
        }
      }
    }
  }
}

TEST_CASE("conv2d: one int stands for both dims, and out= may be strided") {
  for (const Device device : test_devices("conv2d.out")) {
    INFO("device " << device.str());
    const ConvCase c{{2, 4, 6, 5}, {3, 4, 3, 3}, {2, 2}, {1, 1}, {1, 1}, 1};
    const Tensor input = sample_tensor(c.input, bp::kFloat32, Layout::Contiguous, 311, device);
    const Tensor weight = sample_tensor(c.weight, bp::kFloat32, Layout::Contiguous, 312, device);
    Shape shape;
    const Values expected =
        conv2d_reference(values_of(input), values_of(weight), nullptr, c, shape);
    check_tensor(bp::conv2d(input, weight, std::nullopt, 2, 1), shape, bp::kFloat32, expected);
    Tensor out = empty_tensor(shape, bp::kFloat32, Layout::Transposed, device);
    bp::conv2d_out(out, input, weight, std::nullopt, {2}, {1});
    check_tensor(out, shape, bp::kFloat32, expected);
  }
}

// A weight over no input channels sums nothing: the output is the bias, or zeros. Libraries
// that refuse empty operands (cuDNN) must not be handed one.
TEST_CASE("conv2d over no input channels gives the bias, and over an empty batch nothing") {
  for (const Device device : test_devices("conv2d.out")) {
    INFO("device " << device.str());
    for (const DType dtype : declared_dtypes<kernel_dtypes::conv2d_out>()) {
      INFO(name_of(dtype));
      for (const ConvCase& c : {ConvCase{{2, 0, 5, 5}, {3, 0, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 1},
                                ConvCase{{0, 4, 5, 5}, {6, 2, 3, 3}, {2, 1}, {0, 1}, {1, 1}, 2}}) {
        INFO(describe(c));
        const Tensor input = sample_tensor(c.input, dtype, Layout::Contiguous, 321, device);
        const Tensor weight = sample_tensor(c.weight, dtype, Layout::Contiguous, 322, device);
        const Tensor bias = sample_tensor({c.weight[0]}, dtype, Layout::Contiguous, 323, device);
        const Values bias_values = values_of(bias);
        Shape shape;
        const Values with_bias =
            conv2d_reference(values_of(input), values_of(weight), &bias_values, c, shape);
        check_tensor(bp::conv2d(input, weight, bias, {c.stride.h, c.stride.w},
                                {c.padding.h, c.padding.w}, {c.dilation.h, c.dilation.w}, c.groups),
                     shape, dtype, with_bias);
        const Values without_bias =
            conv2d_reference(values_of(input), values_of(weight), nullptr, c, shape);
        check_tensor(bp::conv2d(input, weight, std::nullopt, {c.stride.h, c.stride.w},
                                {c.padding.h, c.padding.w}, {c.dilation.h, c.dilation.w}, c.groups),
                     shape, dtype, without_bias);
      }
    }
  }
}

TEST_CASE("conv2d refuses arguments that do not describe a convolution") {
  const Tensor input = bp::zeros({1, 4, 5, 5});
  const Tensor weight = bp::zeros({6, 2, 3, 3});
  check_error([&] { bp::conv2d(bp::zeros({4, 5, 5}), weight); }, ".unsqueeze(0)");
  check_error([&] { bp::conv2d(input, weight); },
              "the input has 4 channels, but weight of shape [6, 2, 3, 3] with groups=1 expects 2");
  check_error(
      [&] {
        bp::conv2d(input, bp::zeros({5, 2, 3, 3}), std::nullopt, 1, 0, 1, 2);
      },
      "5 output channels must be a positive multiple of groups=2");
  check_error([&] { bp::conv2d(input, weight, bp::zeros({5}), 1, 0, 1, 2); },
              "expected a bias of shape [6]");
  check_error([&] { bp::conv2d(input, weight, std::nullopt, 0, 0, 1, 2); },
              "stride must be positive for every dim, got [0]");
  check_error(
      [&] {
        bp::conv2d(input, weight, std::nullopt, {1, 1, 1}, 0, 1, 2);
      },
      "stride must be one int or two ints (height, width), got 3 values");
  check_error([&] { bp::conv2d(input, weight, std::nullopt, 1, -1, 1, 2); },
              "padding must be non-negative");
  check_error([&] { bp::conv2d(input, weight, std::nullopt, 1, 0, 1, 0); },
              "groups must be positive, got 0");
  check_error([&] { bp::conv2d(input, weight.to(bp::kFloat64), std::nullopt, 1, 0, 1, 2); },
              "weight has dtype Double but the input has Float");
  check_error(
      [&] { bp::conv2d(input.to(bp::kInt32), weight.to(bp::kInt32), std::nullopt, 1, 0, 1, 2); },
      "conv2d.out takes Float32, Float64, Float16 or BFloat16, but input is Int32; convert "
      "with .to(bp::kFloat32)");
  check_error(
      [&] {
        bp::conv2d(input, bp::zeros({6, 2, 0, 3}));
      },
      "conv2d: weight of shape [6, 2, 0, 3] has a 0x3 kernel; a kernel must be at least 1x1");
  check_error(
      [&] {
        bp::conv2d(bp::zeros({1, 2, 2, 2}), bp::zeros({1, 2, 5, 5}));
      },
      "smaller than the window's extent 5x5, so the output would be 0x0");
}

TEST_CASE("max_pool2d and avg_pool2d match direct pooling, with and without ceil_mode") {
  for (const DType dtype :
       declared_dtypes<kernel_dtypes::max_pool2d_out, kernel_dtypes::avg_pool2d_out>()) {
    for (const PoolCase& p : kPoolCases) {
      for (const Layout layout : {Layout::Contiguous, Layout::Transposed, Layout::Sliced}) {
        INFO(name_of(dtype) << " " << name_of(layout) << " input " << shape_string(p.input)
                            << " kernel " << p.kernel.h << "x" << p.kernel.w << " stride "
                            << p.stride.h << "x" << p.stride.w << " padding " << p.padding.h << "x"
                            << p.padding.w << " dilation " << p.dilation.h << "x" << p.dilation.w
                            << (p.ceil_mode ? " ceil" : ""));
        for (const Device device : test_devices("max_pool2d.out")) {
          INFO("device " << device.str());
          const Tensor input = sample_tensor(p.input, dtype, layout, 321, device);
          Shape shape;
          const Values expected = pool_reference(values_of(input), p, shape, max_of);
          check_tensor(bp::max_pool2d(input, {p.kernel.h, p.kernel.w}, {p.stride.h, p.stride.w},
                                      {p.padding.h, p.padding.w}, {p.dilation.h, p.dilation.w},
                                      p.ceil_mode),
                       shape, dtype, expected);
        }
        if (p.dilation.h != 1 || p.dilation.w != 1) continue;
        for (const Device device : test_devices("avg_pool2d.out")) {
          INFO("device " << device.str());
          const Tensor input = sample_tensor(p.input, dtype, layout, 322, device);
          const Values values = values_of(input);
          Shape shape;
          const Shape kernel = {p.kernel.h, p.kernel.w};
          const Shape stride = {p.stride.h, p.stride.w};
          const Shape padding = {p.padding.h, p.padding.w};
          INFO("count_include_pad");
          check_tensor(bp::avg_pool2d(input, kernel, stride, padding, p.ceil_mode, true), shape,
                       dtype,
                       pool_reference(values, p, shape, [](const Values& w, int64_t padded_area) {
                         return sum_of(w) / static_cast<double>(padded_area);
                       }));
          INFO("count_include_pad=false");
          check_tensor(bp::avg_pool2d(input, kernel, stride, padding, p.ceil_mode, false), shape,
                       dtype, pool_reference(values, p, shape, [](const Values& w, int64_t) {
                         return sum_of(w) / static_cast<double>(w.size());
                       }));
          INFO("divisor_override=3");
          check_tensor(bp::avg_pool2d(input, kernel, stride, padding, p.ceil_mode, true, 3), shape,
                       dtype, pool_reference(values, p, shape, [](const Values& w, int64_t) {
                         return sum_of(w) / 3;
                       }));
        }
      }
    }
  }
}

TEST_CASE("max_pool2d propagates NaN and handles -inf, and stride=[] means the kernel size") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  for (const Device device : test_devices("max_pool2d.out")) {
    for (const DType dtype : floating_dtypes()) {
      INFO("device " << device.str() << " " << name_of(dtype));
      const Tensor input =
          make_tensor({1, nan, -inf, -inf, 3, 4, 5, 6}, {1, 2, 2, 2}, dtype, device);
      check_tensor(bp::max_pool2d(input, {2}), {1, 2, 1, 1}, dtype, {nan, 6});
      check_tensor(bp::max_pool2d(make_tensor({-inf, -inf}, {1, 1, 1, 2}, dtype, device), {1, 2}),
                   {1, 1, 1, 1}, dtype, {-inf});
    }
  }
}

TEST_CASE("adaptive_avg_pool2d averages PyTorch's overlapping windows") {
  struct AdaptiveCase {
    Shape input;
    Pair output;
  };
  const AdaptiveCase cases[] = {{{2, 3, 6, 6}, {3, 3}}, {{1, 2, 7, 5}, {3, 2}},
                                {{1, 4, 5, 7}, {1, 1}}, {{1, 1, 3, 2}, {5, 4}},
                                {{2, 9, 4, 4}, {4, 4}}, {{1, 3, 1, 1}, {2, 3}}};
  for (const Device device : test_devices("adaptive_avg_pool2d.out")) {
    INFO("device " << device.str());
    for (const DType dtype : declared_dtypes<kernel_dtypes::adaptive_avg_pool2d_out>()) {
      for (const AdaptiveCase& c : cases) {
        INFO(name_of(dtype) << " input " << shape_string(c.input) << " to " << c.output.h << "x"
                            << c.output.w);
        const Tensor input = sample_tensor(c.input, dtype, Layout::Transposed, 331, device);
        const Values values = values_of(input);
        Values expected;
        for (int64_t n = 0; n < c.input[0] * c.input[1]; ++n) {
          for (int64_t y = 0; y < c.output.h; ++y) {
            for (int64_t x = 0; x < c.output.w; ++x) {
              const int64_t y0 = y * c.input[2] / c.output.h;
              const int64_t y1 = ((y + 1) * c.input[2] + c.output.h - 1) / c.output.h;
              const int64_t x0 = x * c.input[3] / c.output.w;
              const int64_t x1 = ((x + 1) * c.input[3] + c.output.w - 1) / c.output.w;
              double sum = 0;
              for (int64_t iy = y0; iy < y1; ++iy) {
                for (int64_t ix = x0; ix < x1; ++ix) sum += at(values, c.input, 0, n, iy, ix);
              }
              expected.push_back(sum / static_cast<double>((y1 - y0) * (x1 - x0)));
            }
          }
        }
        check_tensor(bp::adaptive_avg_pool2d(input, {c.output.h, c.output.w}),
                     {c.input[0], c.input[1], c.output.h, c.output.w}, dtype, expected);
      }
    }
  }
}

TEST_CASE("pooling refuses windows that cannot be placed") {
  const Tensor input = bp::zeros({1, 2, 4, 4});
  check_error([&] { bp::max_pool2d(input, {3}, {}, {2}); },
              "padding must be at most half the kernel size, got padding 2 for a kernel of 3");
  check_error([&] { bp::max_pool2d(input, {}); },
              "kernel_size must be one int or two ints (height, width), got 0 values");
  check_error([&] { bp::max_pool2d(input, {5}); }, "so the output would be 0x0");
  check_error(
      [&] {
        bp::max_pool2d(bp::zeros({1, 1, 1, 5}), {2});
      },
      "max_pool2d: the input's height 1 (with padding 0 on each side) is smaller than the window's "
      "extent 2 along it, so the output would be 0x2");
  // ceil_mode keeps a last window only where it starts inside the input or its left padding.
  check_error(
      [&] {
        bp::avg_pool2d(bp::zeros({1, 1, 5, 0}), {1}, {}, {0}, /*ceil_mode=*/true);
      },
      "avg_pool2d: the input's width 0 (with padding 0 on each side)");
  check_error([&] { bp::avg_pool2d(input, {2}, {}, {0}, false, true, 0); },
              "divisor_override must not be zero");
  check_error(
      [&] {
        bp::max_pool2d(bp::zeros({2, 4, 4}, bp::kInt64), {2});
      },
      "expected a 4-D input (N, C, H, W), got shape [2, 4, 4]");
  check_error(
      [&] {
        bp::avg_pool2d(bp::zeros({1, 1, 4, 4}, bp::kInt64), {2});
      },
      "avg_pool2d.out takes Float32, Float64, Float16 or BFloat16, but self is Int64");
  check_error(
      [&] {
        bp::adaptive_avg_pool2d(input, {0, 2});
      },
      "output_size must be positive for every dim");
  check_error(
      [&] {
        bp::adaptive_avg_pool2d(bp::zeros({1, 2, 0, 3}), {1});
      },
      "non-zero height and width");
}

}  // namespace optest
