// The implicit-GEMM conv2d kernel (conv.cuh) on emulated launches (emulated_launch.h), in
// double, against a direct convolution: which thread loads, sums and writes what, for both tile
// shapes, at every tile edge, with padding, strides, dilation, groups, a bias and strided tensors.
#include "emulated_launch.h"

#include "kernels/conv.cuh"

#include "cuda_test_support.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace {

using bp::cuda::ConvGemm;
using bp::cuda::Image;
using bp::cuda::NarrowConvTile;
using bp::cuda::SlidingWindow;
using bp::cuda::WideConvTile;

// The whole grid, as launch_conv2d launches it.
template <typename Shape>
void run_grid(const ConvGemm& gemm) {
  bp::cuda::emulated::launch(bp::cuda::conv_grid<Shape>(gemm), dim3(Shape::kThreads), 0,
                             [&] { bp::cuda::conv2d_implicit_gemm<double, Shape>(gemm); });
}

// A 4-D tensor in a buffer of its own: dims laid out from `order[0]` (outermost) to `order[3]`,
// with `gap` elements' step between neighbours of the innermost dim.
struct HostImage {
  std::vector<double> storage;
  Image image;

  HostImage(std::array<int64_t, 4> sizes, std::array<int, 4> order, int64_t gap, double fill) {
    int64_t step = gap;
    for (int k = 3; k >= 0; --k) {
      image.sizes[order[k]] = sizes[order[k]];
      image.strides[order[k]] = step;
      step *= sizes[order[k]];
    }
    storage.assign(static_cast<size_t>(std::max<int64_t>(step, 1)), fill);
    image.data = storage.data();
  }
  double& at(int64_t n, int64_t c, int64_t y, int64_t x) {
    return storage[static_cast<size_t>(n * image.strides[0] + c * image.strides[1] +
                                       y * image.strides[2] + x * image.strides[3])];
  }
};

struct Layout {
  int64_t stride = 1, padding = 0, dilation = 1, groups = 1;
  bool bias = true;
  std::array<int, 4> order = {0, 1, 2, 3};  // input's and out's dims, outermost first
  std::array<int, 4> weight_order = {0, 1, 2, 3};
  int64_t gap = 1;  // step between innermost neighbours, in every tensor
};

struct Case {
  int64_t batch, in_channels, height, width, out_channels, kernel_h, kernel_w;
  Layout layout;
};

constexpr std::array<int, 4> kChannelsLast = {0, 2, 3, 1};

int64_t output_size(int64_t input, int64_t kernel, const Layout& l) {
  return (input + 2 * l.padding - l.dilation * (kernel - 1) - 1) / l.stride + 1;
}

template <typename Shape>
void check_against_direct_convolution(const Case& c) {
  const Layout& l = c.layout;
  std::mt19937 random(11);
  std::uniform_real_distribution<double> uniform(-1, 1);
  const int64_t out_h = output_size(c.height, c.kernel_h, l),
                out_w = output_size(c.width, c.kernel_w, l);
  const int64_t group_in = c.in_channels / l.groups, group_out = c.out_channels / l.groups;
  HostImage input({c.batch, c.in_channels, c.height, c.width}, l.order, l.gap, 0);
  HostImage weight({c.out_channels, group_in, c.kernel_h, c.kernel_w}, l.weight_order, l.gap, 0);
  // NaN everywhere out's elements are not, so that a write outside them shows.
  HostImage out({c.batch, c.out_channels, out_h, out_w}, l.order, l.gap, std::nan(""));
  for (double& v : input.storage) v = uniform(random);
  for (double& v : weight.storage) v = uniform(random);
  std::vector<double> bias(static_cast<size_t>(2 * c.out_channels));
  for (double& v : bias) v = uniform(random);

  SlidingWindow window;
  window.kernel[0] = c.kernel_h, window.kernel[1] = c.kernel_w;
  window.stride[0] = window.stride[1] = l.stride;
  window.padding[0] = window.padding[1] = l.padding;
  window.dilation[0] = window.dilation[1] = l.dilation;
  // Every other element of the buffer: a strided bias.
  const ConvGemm gemm(input.image, weight.image, l.bias ? bias.data() : nullptr, 2, out.image,
                      window, l.groups);
  run_grid<Shape>(gemm);

  int64_t written = 0;
  for (int64_t n = 0; n < c.batch; ++n) {
    for (int64_t o = 0; o < c.out_channels; ++o) {
      const int64_t group = o / group_out;
      for (int64_t y = 0; y < out_h; ++y) {
        for (int64_t x = 0; x < out_w; ++x) {
          double expected = 0;
          for (int64_t ci = 0; ci < group_in; ++ci) {
            for (int64_t ky = 0; ky < c.kernel_h; ++ky) {
              for (int64_t kx = 0; kx < c.kernel_w; ++kx) {
                const int64_t iy = y * l.stride - l.padding + ky * l.dilation;
                const int64_t ix = x * l.stride - l.padding + kx * l.dilation;
                if (iy < 0 || iy >= c.height || ix < 0 || ix >= c.width) continue;
                expected += input.at(n, group * group_in + ci, iy, ix) * weight.at(o, ci, ky, kx);
              }
            }
          }
          if (l.bias) expected += bias[static_cast<size_t>(2 * o)];
          INFO("out[" << n << ", " << o << ", " << y << ", " << x << "]");
          REQUIRE(out.at(n, o, y, x) == doctest::Approx(expected).epsilon(1e-12));
          ++written;
        }
      }
    }
  }
  const auto untouched =
      std::count_if(out.storage.begin(), out.storage.end(), [](double v) { return std::isnan(v); });
  CHECK(static_cast<int64_t>(out.storage.size()) - untouched == written);
}

template <typename Shape>
void check_cases(const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    INFO("input " << c.batch << "x" << c.in_channels << "x" << c.height << "x" << c.width << ", "
                  << c.out_channels << " outputs, kernel " << c.kernel_h << "x" << c.kernel_w
                  << ", stride " << c.layout.stride << ", padding " << c.layout.padding
                  << ", dilation " << c.layout.dilation << ", groups " << c.layout.groups
                  << ", gap " << c.layout.gap);
    check_against_direct_convolution<Shape>(c);
  }
}

TEST_CASE("emulated implicit-GEMM conv2d: wide groups, every output once, summed over every tap") {
  check_cases<WideConvTile>({
      // 3 * 3 * 3 = 27 taps: a whole step of 16 and a partial one; 2 * 11 * 13 = 286 pixels: three
      // pixel tiles, the last partial; 70 channels: a whole channel tile and a partial one.
      {2, 3, 11, 13, 70, 3, 3, {.padding = 1}},
      // Exactly one tile each way: 128 pixels, 64 channels, 16 taps.
      {2, 16, 8, 8, 64, 1, 1, {.bias = false}},
      {1, 5, 17, 19, 17, 3, 2, {.stride = 2, .padding = 2, .dilation = 2}},
      // Groups of 24 outputs over 3 input channels each.
      {2, 6, 9, 7, 48, 3, 3, {.padding = 1, .groups = 2}},
      // Channels-last input and out, the weight's columns outermost, and a gap between neighbours.
      {2,
       4,
       10,
       9,
       33,
       3,
       3,
       {.stride = 2, .padding = 1, .order = kChannelsLast, .weight_order = {3, 0, 1, 2}, .gap = 2}},
      // A 5x5 window taller than the input with padding 2: the windows are mostly padding.
      {1, 2, 3, 4, 20, 5, 5, {.padding = 2}},
  });
}

TEST_CASE("emulated implicit-GEMM conv2d: narrow groups, depthwise among them") {
  check_cases<NarrowConvTile>({
      {2, 5, 13, 12, 5, 3, 3, {.padding = 1, .groups = 5}},                // depthwise
      {1, 8, 23, 21, 16, 3, 3, {.stride = 2, .padding = 1, .groups = 2}},  // 8 outputs per group
      {3, 3, 12, 11, 16, 1, 3, {.dilation = 3}},                           // one whole channel tile
      {2,
       6,
       9,
       10,
       12,
       2,
       2,
       {.groups = 3, .order = kChannelsLast, .weight_order = {1, 2, 3, 0}, .gap = 3}},
  });
}

TEST_CASE("emulated implicit-GEMM conv2d: a weight with no input channels leaves out as the bias") {
  check_cases<WideConvTile>({{2, 0, 5, 5, 20, 3, 3, {.padding = 1}}});
  check_cases<NarrowConvTile>({{2, 0, 5, 5, 4, 3, 3, {.padding = 1, .bias = false}}});
}

}  // namespace
