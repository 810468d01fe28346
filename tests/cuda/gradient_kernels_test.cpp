// conv2d's and pooling's gradient kernels (conv_backward.cuh, pool.cuh) on emulated launches
// (emulated_launch.h): each gradient is the adjoint of its forward op, so for random x and g,
// <forward(x), g> equals <x, backward(g)>, checked in double against a direct convolution and
// the pooling kernel itself, over strides, padding, dilation, groups and ceil mode's partial
// windows.
#include "emulated_launch.h"

#include "kernels/conv_backward.cuh"
#include "kernels/pool.cuh"

#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <random>
#include <vector>

namespace {

using bp::cuda::Image;
using bp::cuda::PoolKind;
using bp::cuda::SlidingWindow;
using bp::cuda::emulated::small_device;

std::vector<float> random_values(size_t count, unsigned seed) {
  std::mt19937 random(seed);
  std::normal_distribution<float> normal(0, 1);
  std::vector<float> values(count);
  for (float& v : values) v = normal(random);
  return values;
}

Image dense_image(std::vector<float>& data, const std::array<int64_t, 4>& sizes) {
  Image image;
  image.data = data.data();
  int64_t step = 1;
  for (int d = 3; d >= 0; --d) {
    image.sizes[d] = sizes[static_cast<size_t>(d)];
    image.strides[d] = step;
    step *= sizes[static_cast<size_t>(d)];
  }
  return image;
}

double dot(const std::vector<float>& a, const std::vector<float>& b) {
  double sum = 0;
  for (size_t i = 0; i < a.size(); ++i) sum += static_cast<double>(a[i]) * b[i];
  return sum;
}

TEST_CASE("emulated conv2d gradient kernels are the adjoints of the convolution") {
  constexpr int64_t kN = 2, kIn = 4, kOut = 6, kGroups = 2, kH = 7, kW = 6, kKh = 3, kKw = 2;
  SlidingWindow window;
  window.stride[0] = 2;
  window.padding[0] = window.padding[1] = 1;
  window.dilation[1] = 2;
  const int64_t out_h = (kH + 2 - (kKh - 1) - 1) / 2 + 1;
  const int64_t out_w = (kW + 2 - 2 * (kKw - 1) - 1) + 1;
  std::vector<float> x = random_values(kN * kIn * kH * kW, 1);
  std::vector<float> w = random_values(kOut * (kIn / kGroups) * kKh * kKw, 2);
  std::vector<float> g = random_values(kN * kOut * out_h * out_w, 3);
  // The convolution, directly, in double.
  std::vector<double> y(g.size(), 0.0);
  for (int64_t n = 0; n < kN; ++n)
    for (int64_t o = 0; o < kOut; ++o)
      for (int64_t c = 0; c < kIn / kGroups; ++c)
        for (int64_t oy = 0; oy < out_h; ++oy)
          for (int64_t ox = 0; ox < out_w; ++ox)
            for (int64_t ky = 0; ky < kKh; ++ky)
              for (int64_t kx = 0; kx < kKw; ++kx) {
                const int64_t iy = oy * 2 - 1 + ky, ix = ox - 1 + kx * 2;
                if (iy < 0 || iy >= kH || ix < 0 || ix >= kW) continue;
                const int64_t channel = o / (kOut / kGroups) * (kIn / kGroups) + c;
                y[((n * kOut + o) * out_h + oy) * out_w + ox] +=
                    static_cast<double>(x[((n * kIn + channel) * kH + iy) * kW + ix]) *
                    w[((o * (kIn / kGroups) + c) * kKh + ky) * kKw + kx];
              }
  double forward = 0;
  for (size_t i = 0; i < g.size(); ++i) forward += y[i] * g[i];

  std::vector<float> grad_input(x.size(), -7.0f), grad_weight(w.size(), -7.0f);
  const Image gi = dense_image(grad_input, {kN, kIn, kH, kW});
  const Image gw = dense_image(grad_weight, {kOut, kIn / kGroups, kKh, kKw});
  const Image go = dense_image(g, {kN, kOut, out_h, out_w});
  const Image in = dense_image(x, {kN, kIn, kH, kW});
  const Image weight = dense_image(w, {kOut, kIn / kGroups, kKh, kKw});
  const auto inputs = static_cast<int64_t>(x.size()), weights = static_cast<int64_t>(w.size());
  bp::cuda::emulated::launch(
      dim3(bp::cuda::grid_blocks(inputs, bp::cuda::kConvInputGradThreads, small_device())),
      dim3(bp::cuda::kConvInputGradThreads), 0,
      [&] { bp::cuda::conv2d_input_gradient<float>(go, weight, gi, window, kGroups, inputs); });
  bp::cuda::emulated::launch(
      dim3(bp::cuda::grid_blocks(weights, 1, small_device())),
      dim3(bp::cuda::kConvWeightGradThreads), 0,
      [&] { bp::cuda::conv2d_weight_gradient<float>(go, in, gw, window, kGroups, weights); });
  CHECK(dot(x, grad_input) == doctest::Approx(forward).epsilon(1e-5));
  CHECK(dot(w, grad_weight) == doctest::Approx(forward).epsilon(1e-5));
}

constexpr int64_t kBatch = 2, kChannels = 3, kHeight = 13, kWidth = 12;

// <pool(x), g> and <x, pool_backward(g)> for one pooling, the forward run by the pooling kernel
// (which also gives max pooling's indices).
void check_pool_adjoint(PoolKind kind, const SlidingWindow& window, int64_t out_h, int64_t out_w) {
  std::vector<float> x = random_values(kBatch * kChannels * kHeight * kWidth, 4);
  std::vector<float> out(static_cast<size_t>(kBatch * kChannels * out_h * out_w), -7.0f);
  std::vector<float> g = random_values(out.size(), 5);
  std::vector<float> grad_input(x.size(), -7.0f);
  std::vector<int64_t> indices(out.size(), -1);
  const Image in = dense_image(x, {kBatch, kChannels, kHeight, kWidth});
  const Image o = dense_image(out, {kBatch, kChannels, out_h, out_w});
  const Image go = dense_image(g, {kBatch, kChannels, out_h, out_w});
  const Image gi = dense_image(grad_input, {kBatch, kChannels, kHeight, kWidth});
  Image positions = o;
  positions.data = indices.data();
  const auto outputs = static_cast<int64_t>(out.size()), inputs = static_cast<int64_t>(x.size());
  bp::cuda::emulated::launch(
      dim3(bp::cuda::grid_blocks(outputs, bp::cuda::kPoolThreads, small_device())),
      dim3(bp::cuda::kPoolThreads), 0,
      [&] { bp::cuda::pool2d<float>(kind, in, o, window, outputs, positions); });
  bp::cuda::emulated::launch(
      dim3(bp::cuda::grid_blocks(inputs, bp::cuda::kPoolThreads, small_device())),
      dim3(bp::cuda::kPoolThreads), 0, [&] {
        bp::cuda::pool2d_backward<float>(kind, go, kind == PoolKind::Max ? positions : Image{}, gi,
                                         window, inputs);
      });
  if (kind == PoolKind::Max) {
    for (size_t i = 0; i < out.size(); ++i) {
      const int64_t plane = static_cast<int64_t>(i) / (out_h * out_w);
      REQUIRE(indices[i] >= 0);
      REQUIRE(indices[i] < kHeight * kWidth);
      CHECK(out[i] == x[static_cast<size_t>(plane * kHeight * kWidth + indices[i])]);
    }
  }
  CHECK(dot(x, grad_input) == doctest::Approx(dot(out, g)).epsilon(1e-5));
}

SlidingWindow window_of(int64_t kernel, int64_t stride, int64_t padding, int64_t dilation = 1) {
  SlidingWindow window;
  window.kernel[0] = window.kernel[1] = kernel;
  window.stride[0] = window.stride[1] = stride;
  window.padding[0] = window.padding[1] = padding;
  window.dilation[0] = window.dilation[1] = dilation;
  return window;
}

TEST_CASE("emulated pooling gradient kernels are the adjoints of pooling") {
  // 13 x 12 by a window of 3, stride 2, padding 1: 7 x 6 windows. Without padding, ceil mode's
  // last column of windows (from 10) reaches past the width: 6 x 6.
  check_pool_adjoint(PoolKind::Max, window_of(3, 2, 1), 7, 6);
  check_pool_adjoint(PoolKind::Max, window_of(3, 2, 1, 2), 6, 5);
  check_pool_adjoint(PoolKind::Max, window_of(3, 2, 0), 6, 6);
  for (const bool include_pad : {false, true}) {
    INFO("count_include_pad " << include_pad);
    SlidingWindow window = window_of(3, 2, 1);
    window.count_include_pad = include_pad;
    check_pool_adjoint(PoolKind::Average, window, 7, 6);
    SlidingWindow partial = window_of(3, 2, 0);
    partial.count_include_pad = include_pad;
    check_pool_adjoint(PoolKind::Average, partial, 6, 6);
  }
  SlidingWindow overridden = window_of(2, 2, 1);
  overridden.divisor_override = 3;
  check_pool_adjoint(PoolKind::Average, overridden, 7, 7);
  check_pool_adjoint(PoolKind::AdaptiveAverage, SlidingWindow{}, 5, 4);
  check_pool_adjoint(PoolKind::AdaptiveAverage, SlidingWindow{}, 13, 17);
}

}  // namespace
