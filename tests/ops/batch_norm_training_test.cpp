// Batch normalisation with batch statistics: native_batch_norm, its backward in both modes, and
// batch_norm's training mode, which also moves the running statistics, against PyTorch's
// formulas in double.
#include "op_test_support.h"

#include <cmath>
#include <string>

namespace optest {
namespace {

const Shape kShapes[] = {{4, 3, 5, 2}, {6, 5}, {3, 2, 1, 1}, {2, 3, 4}};

// Elements of channel c of a row-major (N, C, ...) shape.
std::vector<size_t> channel_elements(const Shape& shape, int64_t c) {
  const int64_t spatial = numel_of(shape) / (shape[0] * shape[1]);
  std::vector<size_t> elements;
  for (int64_t n = 0; n < shape[0]; ++n) {
    for (int64_t s = 0; s < spatial; ++s) {
      elements.push_back(static_cast<size_t>((n * shape[1] + c) * spatial + s));
    }
  }
  return elements;
}

struct BatchStatistics {
  Values mean, invstd, unbiased_variance;
};

BatchStatistics batch_statistics(const Values& x, const Shape& shape, double eps) {
  BatchStatistics s;
  for (int64_t c = 0; c < shape[1]; ++c) {
    const std::vector<size_t> elements = channel_elements(shape, c);
    double sum = 0, squares = 0;
    for (size_t i : elements) sum += x[i];
    const double mean = sum / static_cast<double>(elements.size());
    for (size_t i : elements) squares += (x[i] - mean) * (x[i] - mean);
    const double count = static_cast<double>(elements.size());
    s.mean.push_back(mean);
    s.invstd.push_back(1 / std::sqrt(squares / count + eps));
    s.unbiased_variance.push_back(squares / (count - 1));
  }
  return s;
}

// What 16-bit results may be off by beyond their rounding: the normalised values and
// gradients come from statistics rounded to the dtype.
double extra_tolerance(DType dtype) {
  return dtype == bp::kFloat16 || dtype == bp::kBFloat16 ? 0.1
         : dtype == bp::kFloat32                         ? 1e-4
                                                         : 1e-10;
}

std::optional<Tensor> maybe(bool present, const Tensor& t) {
  return present ? std::optional<Tensor>(t) : std::nullopt;
}

}  // namespace

TEST_CASE(
    "native_batch_norm normalises with the batch statistics when training and the "
    "running ones otherwise") {
  const double eps = 1e-5;
  for (const Device device : test_devices("native_batch_norm.out")) {
    INFO("device " << device.str());
    for (const DType dtype : declared_dtypes<kernel_dtypes::native_batch_norm_out>()) {
      for (const Shape& shape : kShapes) {
        for (const Layout layout : kAllLayouts) {
          for (const bool affine : {false, true}) {
            INFO(name_of(dtype) << " " << shape_string(shape) << " " << name_of(layout)
                                << std::string(affine ? " with" : " without")
                                << " weight and bias");
            const int64_t channels = shape[1];
            const Tensor x = sample_tensor(shape, dtype, layout, 501, device);
            const Tensor weight = sample_tensor({channels}, dtype, Layout::Sliced, 502, device);
            const Tensor bias = sample_tensor({channels}, dtype, Layout::Contiguous, 503, device);
            const Tensor running_mean =
                sample_tensor({channels}, dtype, Layout::Contiguous, 504, device);
            const Tensor running_var = bp::add(
                bp::abs(sample_tensor({channels}, dtype, Layout::Contiguous, 505, device)), 0.5);
            const Values xs = values_of(x), w = values_of(weight), b = values_of(bias);
            const BatchStatistics stats = batch_statistics(xs, shape, eps);
            const Values rm = values_of(running_mean), rv = values_of(running_var);
            Values trained(xs.size()), evaluated(xs.size());
            for (int64_t c = 0; c < channels; ++c) {
              const size_t k = static_cast<size_t>(c);
              for (size_t i : channel_elements(shape, c)) {
                const double scale = affine ? w[k] : 1, shift = affine ? b[k] : 0;
                trained[i] = (xs[i] - stats.mean[k]) * stats.invstd[k] * scale + shift;
                evaluated[i] = (xs[i] - rm[k]) / std::sqrt(rv[k] + eps) * scale + shift;
              }
            }
            const double tolerance = extra_tolerance(dtype);
            const auto [out, mean, invstd] =
                bp::native_batch_norm(x, maybe(affine, weight), maybe(affine, bias), std::nullopt,
                                      std::nullopt, true, 0.1, eps);
            check_tensor(out, shape, dtype, trained, tolerance);
            check_tensor(mean, {channels}, dtype, stats.mean, tolerance);
            check_tensor(invstd, {channels}, dtype, stats.invstd, tolerance * 10);
            const auto [eval_out, eval_mean, eval_invstd] =
                bp::native_batch_norm(x, maybe(affine, weight), maybe(affine, bias), running_mean,
                                      running_var, false, 0.1, eps);
            check_tensor(eval_out, shape, dtype, evaluated, tolerance);
            CHECK(shape_of(eval_mean) == Shape{0});
            CHECK(shape_of(eval_invstd) == Shape{0});
          }
        }
      }
    }
  }
}

TEST_CASE("native_batch_norm_backward gives PyTorch's gradients in both modes") {
  const double eps = 1e-5;
  for (const Device device : test_devices("native_batch_norm_backward.out")) {
    INFO("device " << device.str());
    for (const DType dtype : declared_dtypes<kernel_dtypes::native_batch_norm_backward_out>()) {
      for (const Shape& shape : kShapes) {
        for (const Layout layout : kWritableLayouts) {
          for (const bool train : {true, false}) {
            for (const bool affine : {false, true}) {
              INFO(name_of(dtype) << " " << shape_string(shape) << " " << name_of(layout)
                                  << std::string(train ? " train" : " eval")
                                  << std::string(affine ? " with" : " without") << " weight");
              const int64_t channels = shape[1];
              const Tensor x = sample_tensor(shape, dtype, layout, 511, device);
              const Tensor grad = sample_tensor(shape, dtype, Layout::Transposed, 512, device);
              const Tensor weight = sample_tensor({channels}, dtype, Layout::Sliced, 513, device);
              const Tensor running_mean =
                  sample_tensor({channels}, dtype, Layout::Contiguous, 514, device);
              const Tensor running_var = bp::add(
                  bp::abs(sample_tensor({channels}, dtype, Layout::Sliced, 515, device)), 0.5);
              const auto [out, save_mean, save_invstd] = bp::native_batch_norm(
                  x, std::nullopt, std::nullopt, std::nullopt, std::nullopt, true, 0.1, eps);
              const Values xs = values_of(x), g = values_of(grad), w = values_of(weight);
              const Values m = train ? values_of(save_mean) : values_of(running_mean);
              const Values second = train ? values_of(save_invstd) : values_of(running_var);
              Values grad_input(xs.size()), grad_weight, grad_bias;
              for (int64_t c = 0; c < channels; ++c) {
                const size_t k = static_cast<size_t>(c);
                const double invstd = train ? second[k] : 1 / std::sqrt(second[k] + eps);
                const std::vector<size_t> elements = channel_elements(shape, c);
                const double count = static_cast<double>(elements.size());
                double sum = 0, dot = 0;
                for (size_t i : elements) sum += g[i], dot += g[i] * (xs[i] - m[k]);
                const double scale = invstd * (affine ? w[k] : 1);
                const double projection = invstd * invstd * dot / count;
                for (size_t i : elements) {
                  grad_input[i] = train ? (g[i] - sum / count - (xs[i] - m[k]) * projection) * scale
                                        : g[i] * scale;
                }
                grad_weight.push_back(dot * invstd);
                grad_bias.push_back(sum);
              }
              const auto [gi, gw, gb] =
                  bp::native_batch_norm_backward(grad, x, maybe(affine, weight), running_mean,
                                                 running_var, save_mean, save_invstd, train, eps);
              const double tolerance = extra_tolerance(dtype);
              check_tensor(gi, shape, dtype, grad_input, tolerance);
              check_tensor(gw, {channels}, dtype, grad_weight, tolerance * 10);
              check_tensor(gb, {channels}, dtype, grad_bias, tolerance);
            }
          }
        }
      }
    }
  }
}

TEST_CASE(
    "batch_norm in training mode normalises with the batch statistics and moves the "
    "running statistics toward them") {
  const double eps = 1e-5, momentum = 0.25;
  const Shape shape = {4, 3, 2, 2};
  for (const Device device : test_devices("native_batch_norm.out")) {
    INFO("device " << device.str());
    const Tensor x = sample_tensor(shape, bp::kFloat32, Layout::Contiguous, 521, device);
    const Tensor running_mean = make_tensor({0.5, -1, 2}, {3}, bp::kFloat32, device);
    const Tensor running_var = make_tensor({1, 2, 0.25}, {3}, bp::kFloat32, device);
    const BatchStatistics stats = batch_statistics(values_of(x), shape, eps);
    const Values xs = values_of(x);
    Values normalised(xs.size());
    Values expected_mean, expected_var;
    const Values rm = values_of(running_mean), rv = values_of(running_var);
    for (int64_t c = 0; c < 3; ++c) {
      const size_t k = static_cast<size_t>(c);
      for (size_t i : channel_elements(shape, c)) {
        normalised[i] = (xs[i] - stats.mean[k]) * stats.invstd[k];
      }
      expected_mean.push_back((1 - momentum) * rm[k] + momentum * stats.mean[k]);
      expected_var.push_back((1 - momentum) * rv[k] + momentum * stats.unbiased_variance[k]);
    }
    check_tensor(bp::batch_norm(x, std::nullopt, std::nullopt, running_mean, running_var, true,
                                momentum, eps, true),
                 shape, bp::kFloat32, normalised, 1e-4);
    check_tensor(running_mean, {3}, bp::kFloat32, expected_mean, 1e-5);
    check_tensor(running_var, {3}, bp::kFloat32, expected_var, 1e-4);

    INFO("without running statistics, only the output");
    check_tensor(bp::batch_norm(x, std::nullopt, std::nullopt, std::nullopt, std::nullopt, true,
                                momentum, eps, true),
                 shape, bp::kFloat32, normalised, 1e-4);
    check_error(
        [&] {
          bp::batch_norm(bp::ones({1, 3}, bp::kFloat32, device), std::nullopt, std::nullopt,
                         std::nullopt, std::nullopt, true, momentum, eps, true);
        },
        "batch_norm: expected more than 1 value per channel when training, got an input of "
        "shape [1, 3]");
  }
}

}  // namespace optest
