// The pooling kernel (pool.cuh) on emulated launches (emulated_launch.h), against the CPU
// backend: max with NaN and dilation, averages with and without the padding and with a divisor
// override, ceil mode's partial windows, and adaptive windows that overlap.
#include "emulated_launch.h"

#include "kernels/pool.cuh"

#include "cuda_test_support.h"

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <vector>

namespace {

using bp::cuda::PoolKind;
using bp::cuda::SlidingWindow;
using bp::cuda::emulated::small_device;

// With a width of 12, ceil mode gives a last window of 3 that reaches past the right padding.
constexpr int64_t kBatch = 2, kChannels = 3, kHeight = 13, kWidth = 12;

std::vector<float> input_values() {
  std::mt19937 random(4);
  std::normal_distribution<float> normal(0, 1);
  std::vector<float> values(kBatch * kChannels * kHeight * kWidth);
  for (float& v : values) v = normal(random);
  values[40] = std::numeric_limits<float>::quiet_NaN();
  return values;
}

bp::cuda::Image dense_image(const void* data, const std::array<int64_t, 4>& sizes) {
  bp::cuda::Image image;
  image.data = const_cast<void*>(data);
  int64_t step = 1;
  for (int d = 3; d >= 0; --d) {
    image.sizes[d] = sizes[static_cast<size_t>(d)];
    image.strides[d] = step;
    step *= sizes[static_cast<size_t>(d)];
  }
  return image;
}

// The kernel over `input` into a tensor shaped as `expected`, which the CPU backend computed.
void check_pool(PoolKind kind, const SlidingWindow& window, const std::vector<float>& input,
                const bp::Tensor& expected) {
  std::vector<float> out(static_cast<size_t>(expected.numel()), -7.0f);
  const bp::cuda::Image in_image = dense_image(input.data(), {kBatch, kChannels, kHeight, kWidth});
  const bp::cuda::Image out_image = dense_image(
      out.data(), {expected.size(0), expected.size(1), expected.size(2), expected.size(3)});
  const auto total = static_cast<int64_t>(out.size());
  bp::cuda::emulated::launch(
      dim3(bp::cuda::grid_blocks(total, bp::cuda::kPoolThreads, small_device())),
      dim3(bp::cuda::kPoolThreads), 0,
      [&] { bp::cuda::pool2d<float>(kind, in_image, out_image, window, total); });
  const std::vector<float> reference = expected.contiguous().to_vector<float>();
  for (size_t i = 0; i < out.size(); ++i) {
    INFO("element " << i);
    if (std::isnan(reference[i])) {
      REQUIRE(std::isnan(out[i]));
    } else {
      REQUIRE(out[i] == doctest::Approx(reference[i]).epsilon(1e-6));
    }
  }
}

SlidingWindow window_of(int64_t kernel, int64_t stride, int64_t padding, int64_t dilation = 1) {
  SlidingWindow window;
  window.kernel[0] = window.kernel[1] = kernel;
  window.stride[0] = window.stride[1] = stride;
  window.padding[0] = window.padding[1] = padding;
  window.dilation[0] = window.dilation[1] = dilation;
  return window;
}

TEST_CASE("emulated pooling kernel: max, averages and adaptive windows, as the CPU backend") {
  const std::vector<float> values = input_values();
  const bp::Tensor x = bp::from_vector(values, {kBatch, kChannels, kHeight, kWidth});
  for (const bool ceil_mode : {false, true}) {
    INFO("ceil_mode " << ceil_mode);
    check_pool(PoolKind::Max, window_of(3, 2, 1), values,
               bp::max_pool2d(x, {3}, {2}, {1}, {1}, ceil_mode));
    check_pool(PoolKind::Max, window_of(3, 2, 1, 2), values,
               bp::max_pool2d(x, {3}, {2}, {1}, {2}, ceil_mode));
    for (const bool include_pad : {false, true}) {
      INFO("count_include_pad " << include_pad);
      SlidingWindow window = window_of(3, 2, 1);
      window.count_include_pad = include_pad;
      check_pool(PoolKind::Average, window, values,
                 bp::avg_pool2d(x, {3}, {2}, {1}, ceil_mode, include_pad));
    }
    SlidingWindow overridden = window_of(2, 2, 1);
    overridden.divisor_override = 3;
    check_pool(PoolKind::Average, overridden, values,
               bp::avg_pool2d(x, {2}, {2}, {1}, ceil_mode, true, 3));
  }
  check_pool(PoolKind::AdaptiveAverage, SlidingWindow{}, values,
             bp::adaptive_avg_pool2d(x, {5, 4}));
  check_pool(PoolKind::AdaptiveAverage, SlidingWindow{}, values,
             bp::adaptive_avg_pool2d(x, {13, 17}));
}

}  // namespace
