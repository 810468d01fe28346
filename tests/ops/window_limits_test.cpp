// conv2d and the 2-D pooling ops with their window arguments (kernel_size, stride, padding,
// dilation, output_size, groups, and conv2d's kernel, the weight's size) at the limits of int64,
// on every device: a value below an argument's minimum, or one whose window arithmetic would
// overflow, is a bp::Error naming the argument before any kernel runs; a value that is legal
// however large gives the right result.
#include "op_test_support.h"

#include <limits>

namespace optest {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kHuge = int64_t{1} << 62;

// An int[2] argument with `value` along dim 0, along dim 1 (with `other` along the other dim), or
// given once for both dims; `dim` is the dim the value first reaches.
struct Placement {
  Shape argument;
  int dim;
};

std::vector<Placement> placements(int64_t value, int64_t other) {
  return {{{value, other}, 0}, {{other, value}, 1}, {{value}, 0}};
}

std::string named(const std::string& argument, int dim, int64_t value) {
  return argument + "[" + std::to_string(dim) + "]=" + std::to_string(value);
}

// A 4x4 image holding 0..15, row by row.
Tensor image(Device device) { return bp::arange(16, bp::kFloat32).view({1, 1, 4, 4}).to(device); }

TEST_CASE("window arguments below their minimum are refused by name at the limits of int64") {
  for (const int64_t value : {kMin, -kHuge}) {
    for (const Placement& p : placements(value, 1)) {
      INFO("value " << value << " argument " << shape_string(p.argument));
      for (const Device device : test_devices("max_pool2d.out")) {
        INFO("device " << device.str());
        const Tensor x = image(device);
        check_error([&] { bp::max_pool2d(x, p.argument); },
                    "max_pool2d: kernel_size must be positive");
        check_error([&] { bp::max_pool2d(x, {2}, p.argument); },
                    "max_pool2d: stride must be positive");
        check_error([&] { bp::max_pool2d(x, {2}, {}, p.argument); },
                    "max_pool2d: padding must be non-negative");
        check_error([&] { bp::max_pool2d(x, {2}, {}, {0}, p.argument); },
                    "max_pool2d: dilation must be positive");
      }
      for (const Device device : test_devices("avg_pool2d.out")) {
        INFO("device " << device.str());
        const Tensor x = image(device);
        check_error([&] { bp::avg_pool2d(x, p.argument); },
                    "avg_pool2d: kernel_size must be positive");
        check_error([&] { bp::avg_pool2d(x, {2}, p.argument); },
                    "avg_pool2d: stride must be positive");
        check_error([&] { bp::avg_pool2d(x, {2}, {}, p.argument); },
                    "avg_pool2d: padding must be non-negative");
      }
      for (const Device device : test_devices("adaptive_avg_pool2d.out")) {
        INFO("device " << device.str());
        check_error([&] { bp::adaptive_avg_pool2d(image(device), p.argument); },
                    "adaptive_avg_pool2d: output_size must be positive");
      }
      for (const Device device : test_devices("conv2d.out")) {
        INFO("device " << device.str());
        const Tensor x = image(device);
        const Tensor weight = bp::ones({1, 1, 3, 3}, bp::kFloat32, device);
        check_error([&] { bp::conv2d(x, weight, std::nullopt, p.argument); },
                    "conv2d: stride must be positive");
        check_error([&] { bp::conv2d(x, weight, std::nullopt, 1, p.argument); },
                    "conv2d: padding must be non-negative");
        check_error([&] { bp::conv2d(x, weight, std::nullopt, 1, 0, p.argument); },
                    "conv2d: dilation must be positive");
        check_error([&] { bp::conv2d(x, weight, std::nullopt, 1, 0, 1, value); },
                    "conv2d: groups must be positive");
      }
    }
  }
}

TEST_CASE("max_pool2d refuses huge windows by name: dilation overflowing int64, padding, kernels") {
  for (const Device device : test_devices("max_pool2d.out")) {
    INFO("device " << device.str());
    const Tensor x = image(device);
    // A dilation that wraps the window's extent around would make the output larger than the
    // input.
    check_error(
        [&] {
          bp::max_pool2d(x, {3, 3}, {1, 1}, {0, 0}, {kMax, kMax});
        },
        "max_pool2d: dilation[0]=9223372036854775807 with kernel_size[0]=3 overflows int64");
    for (const int64_t value : {kMax, kHuge}) {
      for (const Placement& p : placements(value, 1)) {
        INFO("value " << value << " argument " << shape_string(p.argument));
        check_error([&] { bp::max_pool2d(x, {3}, {1}, {0}, p.argument); },
                    "max_pool2d: " + named("dilation", p.dim, value) + " with " +
                        named("kernel_size", p.dim, 3) + " overflows int64");
        check_error([&] { bp::max_pool2d(x, {3}, {1}, p.argument); },
                    "max_pool2d: padding must be at most half the kernel size, got padding " +
                        std::to_string(value));
        check_error([&] { bp::max_pool2d(x, p.argument, {1}); },
                    "is smaller than the window's extent " + std::to_string(value));
        check_error([&] { bp::max_pool2d(x, p.argument, {1}, {0}, {1}, /*ceil_mode=*/true); },
                    "is smaller than the window's extent " + std::to_string(value));
      }
    }
    // The padded input, 4 + 2 * padding, leaves int64 under a kernel that allows that padding.
    check_error(
        [&] {
          bp::max_pool2d(x, {kMax, 1}, {1}, {kMax / 2, 0});
        },
        "max_pool2d: padding[0]=4611686018427387903 on an input height of 4 overflows int64");
    // With ceil_mode, the last window of a row as wide as int64 allows would end past it.
    const Tensor widest = bp::zeros({1, 1, 1, 1}, bp::kFloat32, device).expand({1, 1, 1, kMax});
    check_error(
        [&] {
          bp::max_pool2d(widest, {1, kHuge + 1}, {1, kHuge}, {0}, {1}, true);
        },
        "max_pool2d: stride[1]=4611686018427387904 with kernel_size[1]=4611686018427387905 "
        "and dilation[1]=1 overflows int64 with ceil_mode");
  }
}

TEST_CASE("avg_pool2d refuses huge windows by name: a kernel area overflowing int64, padding") {
  for (const Device device : test_devices("avg_pool2d.out")) {
    INFO("device " << device.str());
    const Tensor x = image(device);
    for (const int64_t value : {kMax, kHuge}) {
      INFO("value " << value);
      check_error([&] { bp::avg_pool2d(x, {value}, {1}); },
                  "avg_pool2d: kernel_size [" + std::to_string(value) + ", " +
                      std::to_string(value) + "] overflows int64");
      for (const Placement& p : placements(value, 1)) {
        INFO("argument " << shape_string(p.argument));
        check_error([&] { bp::avg_pool2d(x, {3}, {1}, p.argument); },
                    "avg_pool2d: padding must be at most half the kernel size, got padding " +
                        std::to_string(value));
        if (p.argument.size() == 2) {
          check_error([&] { bp::avg_pool2d(x, p.argument, {1}); },
                      "is smaller than the window's extent " + std::to_string(value));
        }
      }
    }
    check_error(
        [&] {
          bp::avg_pool2d(x, {kMax, 1}, {1}, {kMax / 2, 0}, /*ceil_mode=*/true);
        },
        "avg_pool2d: padding[0]=4611686018427387903 on an input height of 4 overflows int64");
  }
}

TEST_CASE("adaptive_avg_pool2d refuses output sizes whose window bounds overflow int64, by name") {
  for (const Device device : test_devices("adaptive_avg_pool2d.out")) {
    INFO("device " << device.str());
    for (const int64_t value : {kMax, kHuge}) {
      for (const Placement& p : placements(value, 1)) {
        INFO("value " << value << " argument " << shape_string(p.argument));
        check_error([&] { bp::adaptive_avg_pool2d(image(device), p.argument); },
                    "adaptive_avg_pool2d: " + named("output_size", p.dim, value) +
                        " over an input " + (p.dim == 0 ? "height" : "width") +
                        " of 4 overflows int64");
      }
    }
    // Bounds are output index times input size: a small output over a huge (expanded) input.
    const Tensor tall = bp::zeros({1, 1, 1, 1}, bp::kFloat32, device).expand({1, 1, kHuge, 1});
    check_error(
        [&] {
          bp::adaptive_avg_pool2d(tall, {4, 1});
        },
        "adaptive_avg_pool2d: output_size[0]=4 over an input height of 4611686018427387904 "
        "overflows int64");
  }
}

TEST_CASE("conv2d refuses huge windows by name: padding, dilation, groups, an expanded weight") {
  for (const Device device : test_devices("conv2d.out")) {
    INFO("device " << device.str());
    const Tensor x = image(device);
    const Tensor weight = bp::ones({1, 1, 3, 3}, bp::kFloat32, device);
    for (const int64_t value : {kMax, kHuge}) {
      for (const Placement& p : placements(value, 0)) {
        INFO("value " << value << " argument " << shape_string(p.argument));
        check_error([&] { bp::conv2d(x, weight, std::nullopt, 1, p.argument); },
                    "conv2d: " + named("padding", p.dim, value) + " on an input " +
                        (p.dim == 0 ? "height" : "width") + " of 4 overflows int64");
      }
      for (const Placement& p : placements(value, 1)) {
        INFO("value " << value << " argument " << shape_string(p.argument));
        check_error([&] { bp::conv2d(x, weight, std::nullopt, 1, 0, p.argument); },
                    "conv2d: " + named("dilation", p.dim, value) + " with weight.size(" +
                        std::to_string(2 + p.dim) + ")=3 overflows int64");
      }
      INFO("groups " << value);
      check_error(
          [&] {
            bp::conv2d(bp::zeros({1, 4, 4, 4}, bp::kFloat32, device),
                       bp::zeros({8, 2, 3, 3}, bp::kFloat32, device), std::nullopt, 1, 0, 1, value);
          },
          "conv2d: groups=" + std::to_string(value) +
              " with weight of shape [8, 2, 3, 3] "
              "overflows int64");
    }
    // The kernel's size is the weight's: an expanded weight may be as large as int64 allows.
    const Tensor tall = bp::ones({1, 1, 1, 1}, bp::kFloat32, device).expand({1, 1, kHuge, 1});
    check_error(
        [&] {
          bp::conv2d(x, tall, std::nullopt, 1, 0, {3, 1});
        },
        "conv2d: dilation[0]=3 with weight.size(2)=4611686018427387904 overflows int64");
    check_error([&] { bp::conv2d(x, tall); },
                "is smaller than the window's extent 4611686018427387904");
  }
}

TEST_CASE("window arguments that are legal however large give the right result") {
  for (const Device device : test_devices("max_pool2d.out")) {
    INFO("device " << device.str());
    // A stride past the input leaves the first window only: rows and columns 0..2.
    for (const bool ceil_mode : {false, true}) {
      INFO("ceil_mode " << ceil_mode);
      check_tensor(bp::max_pool2d(image(device), {3}, {kMax}, {0}, {1}, ceil_mode), {1, 1, 1, 1},
                   bp::kFloat32, {10});
      check_tensor(bp::max_pool2d(image(device), {3}, {kHuge, 1}, {0}, {1}, ceil_mode),
                   {1, 1, 1, 2}, bp::kFloat32, {10, 11});
    }
    // A kernel as large as int64 allows, padded by half of it, over one element: one window
    // that holds it, with no row of the kernel's width to fill.
    const Tensor one = make_tensor({5}, {1, 1, 1, 1}, bp::kFloat32, device);
    check_tensor(bp::max_pool2d(one, {kMax}, {}, {kMax / 2}), {1, 1, 1, 1}, bp::kFloat32, {5});
  }
  for (const Device device : test_devices("avg_pool2d.out")) {
    INFO("device " << device.str());
    check_tensor(bp::avg_pool2d(image(device), {3}, {kMax}), {1, 1, 1, 1}, bp::kFloat32, {5});
    const Tensor one = make_tensor({5}, {1, 1, 1, 1}, bp::kFloat32, device);
    check_tensor(
        bp::avg_pool2d(one, {kMax, 1}, {}, {kMax / 2, 0}, false, /*count_include_pad=*/false),
        {1, 1, 1, 1}, bp::kFloat32, {5});
    // The padded window holds kMax elements, the most an average may divide by.
    check_tensor(
        bp::avg_pool2d(one, {kMax, 1}, {}, {kMax / 2, 0}, false, /*count_include_pad=*/true),
        {1, 1, 1, 1}, bp::kFloat32, {5 / static_cast<double>(kMax)});
  }
  for (const Device device : test_devices("conv2d.out")) {
    INFO("device " << device.str());
    const Tensor weight = bp::ones({1, 1, 3, 3}, bp::kFloat32, device);
    // The first window alone: 0 + 1 + 2 + 4 + 5 + 6 + 8 + 9 + 10.
    check_tensor(bp::conv2d(image(device), weight, std::nullopt, kMax), {1, 1, 1, 1}, bp::kFloat32,
                 {45});
    // A dilation along a dim where the kernel has one tap changes nothing: columns of three rows.
    check_tensor(bp::conv2d(image(device), bp::ones({1, 1, 3, 1}, bp::kFloat32, device),
                            std::nullopt, 1, 0, {1, kMax}),
                 {1, 1, 2, 4}, bp::kFloat32, {12, 15, 18, 21, 24, 27, 30, 33});
  }
}

}  // namespace
}  // namespace optest
