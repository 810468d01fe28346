// checked_window_output_size and adaptive_arithmetic_fits: PyTorch's output sizes wherever the
// window's arithmetic fits in int64, and which step leaves it where it does not; the checked
// arithmetic they are built on; and covering_windows, the windows that take each input index.
#include <backplane/sdk/window2d.hpp>

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace {

using bp::plugin::checked_window_output_size;
using bp::plugin::Window2d;
using bp::plugin::WindowOverflow;

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

// One dim's window (the other is 1x1).
Window2d window(int64_t kernel, int64_t stride, int64_t padding, int64_t dilation) {
  return {{kernel, 1}, {stride, 1}, {padding, 0}, {dilation, 1}};
}

// PyTorch's pooling_output_shape, in floating point, where nothing overflows.
int64_t pytorch_size(int64_t input, int64_t kernel, int64_t stride, int64_t padding,
                     int64_t dilation, bool ceil_mode) {
  const double room = static_cast<double>(input + 2 * padding - dilation * (kernel - 1) - 1);
  const double windows = ceil_mode ? std::ceil(room / static_cast<double>(stride))
                                   : std::floor(room / static_cast<double>(stride));
  int64_t size = static_cast<int64_t>(windows) + 1;
  if (ceil_mode && (size - 1) * stride >= input + padding) --size;
  return std::max<int64_t>(size, 0);
}

TEST_CASE("checked arithmetic gives the exact result, or nothing where it leaves the type") {
  CHECK(bp::plugin::checked_add(kMax - 1, int64_t{1}) == kMax);
  CHECK_FALSE(bp::plugin::checked_add(kMax, int64_t{1}));
  CHECK(bp::plugin::checked_sub(kMin + 1, int64_t{1}) == kMin);
  CHECK_FALSE(bp::plugin::checked_sub(kMin, int64_t{1}));
  CHECK(bp::plugin::checked_mul(int64_t{1} << 31, int64_t{1} << 31) == int64_t{1} << 62);
  CHECK_FALSE(bp::plugin::checked_mul(int64_t{1} << 32, int64_t{1} << 31));
  CHECK_FALSE(bp::plugin::checked_mul(kMin, int64_t{-1}));
}

TEST_CASE("checked_window_output_size sizes outputs as PyTorch does where nothing overflows") {
  for (const bool ceil_mode : {false, true}) {
    for (int64_t input = 0; input <= 9; ++input) {
      for (int64_t kernel = 1; kernel <= 5; ++kernel) {
        for (int64_t stride = 1; stride <= 4; ++stride) {
          for (int64_t padding = 0; padding <= kernel / 2; ++padding) {
            for (int64_t dilation = 1; dilation <= 3; ++dilation) {
              INFO("input " << input << " kernel " << kernel << " stride " << stride << " padding "
                            << padding << " dilation " << dilation << (ceil_mode ? " ceil" : ""));
              const auto size = checked_window_output_size(
                  window(kernel, stride, padding, dilation), 0, input, ceil_mode);
              CHECK(size.overflow == WindowOverflow::None);
              CHECK(size.size == pytorch_size(input, kernel, stride, padding, dilation, ceil_mode));
            }
          }
        }
      }
    }
  }
}

TEST_CASE("checked_window_output_size names the step whose arithmetic leaves int64") {
  CHECK(checked_window_output_size(window(3, 1, 0, kMax), 0, 4).overflow == WindowOverflow::Span);
  CHECK(checked_window_output_size(window(kMax, 1, kMax / 2, 1), 0, 4).overflow ==
        WindowOverflow::PaddedInput);
  // The last of two windows of a row as wide as int64 allows starts inside it, ends past it.
  const int64_t huge = int64_t{1} << 62;
  CHECK(checked_window_output_size(window(huge + 1, huge, 0, 1), 0, kMax, true).overflow ==
        WindowOverflow::LastWindow);
  // Without ceil_mode the last window ends inside the padded input, so that row has one.
  CHECK(checked_window_output_size(window(huge + 1, huge, 0, 1), 0, kMax).size == 1);
  // Large but legal: strides past the input, and padding that reaches the most int64 holds.
  CHECK(checked_window_output_size(window(3, kMax, 0, 1), 0, 4, true).size == 1);
  CHECK(checked_window_output_size(window(kMax, kMax, kMax / 2, 1), 0, 1).size == 1);
  CHECK(checked_window_output_size(window(1, 1, 0, kMax), 0, 4).size == 4);
}

TEST_CASE("adaptive_arithmetic_fits holds while output_size * input_size + output_size - 1 fits") {
  CHECK(bp::plugin::adaptive_arithmetic_fits(4, 4));
  CHECK(bp::plugin::adaptive_arithmetic_fits(1, kMax / 2 + 1));
  CHECK_FALSE(bp::plugin::adaptive_arithmetic_fits(1, kMax));
  CHECK_FALSE(bp::plugin::adaptive_arithmetic_fits(int64_t{1} << 62, 2));
}

// For each input index, the outputs whose windows take it as a tap, by brute force.
std::vector<std::vector<int64_t>> takers(const bp::plugin::PoolAxis& axis, int64_t in_size) {
  std::vector<std::vector<int64_t>> taken(static_cast<size_t>(in_size));
  for (size_t o = 0; o < axis.first.size(); ++o) {
    for (int64_t t = 0; t < axis.count[o]; ++t) {
      taken[static_cast<size_t>(axis.first[o] + t * axis.step)].push_back(static_cast<int64_t>(o));
    }
  }
  return taken;
}

TEST_CASE("covering_windows gives each input index a range holding every window that takes it") {
  struct Case {
    int64_t in, kernel, stride, padding, dilation;
    bool ceil_mode;
  };
  const Case cases[] = {{7, 3, 1, 1, 1, false},  {8, 2, 2, 0, 1, false}, {9, 3, 2, 1, 3, true},
                        {10, 3, 1, 1, 3, false}, {5, 5, 3, 2, 1, true},  {6, 1, 4, 0, 1, true}};
  for (const Case& c : cases) {
    INFO("input " << c.in << " kernel " << c.kernel << " stride " << c.stride << " padding "
                  << c.padding << " dilation " << c.dilation << (c.ceil_mode ? " ceil" : ""));
    const Window2d w = window(c.kernel, c.stride, c.padding, c.dilation);
    const int64_t out = checked_window_output_size(w, 0, c.in, c.ceil_mode).size;
    const bp::plugin::PoolAxis axis = bp::plugin::pooling_axis(w, 0, c.in, out, false);
    const bp::plugin::CoveringWindows covering = bp::plugin::covering_windows(axis, c.in);
    const auto taken = takers(axis, c.in);
    REQUIRE(covering.first.size() == static_cast<size_t>(c.in));
    for (int64_t i = 0; i < c.in; ++i) {
      const auto k = static_cast<size_t>(i);
      INFO("input index " << i);
      for (const int64_t o : taken[k]) {
        CHECK(o >= covering.first[k]);
        CHECK(o < covering.first[k] + covering.count[k]);
      }
      if (c.dilation == 1) CHECK(covering.count[k] == static_cast<int64_t>(taken[k].size()));
    }
  }
  INFO("adaptive windows, which overlap");
  const bp::plugin::PoolAxis adaptive = bp::plugin::adaptive_axis(5, 3);
  const bp::plugin::CoveringWindows covering = bp::plugin::covering_windows(adaptive, 5);
  CHECK(covering.first == std::vector<int64_t>{0, 0, 1, 1, 2});
  CHECK(covering.count == std::vector<int64_t>{1, 2, 1, 2, 1});
}

}  // namespace
