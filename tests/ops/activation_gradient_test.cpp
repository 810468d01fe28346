// The gradients of the activations: gelu_backward (both approximations) and threshold_backward
// (relu's), against their derivatives in double.
#include "op_test_support.h"

#include <cmath>
#include <numbers>

namespace optest {
namespace {

double gelu_erf_derivative(double x) {
  const double cdf = 0.5 * std::erfc(-x / std::numbers::sqrt2);
  const double density = std::exp(-0.5 * x * x) / std::sqrt(2 * std::numbers::pi);
  return cdf + x * density;
}

double gelu_tanh_derivative(double x) {
  const double k = std::sqrt(2 / std::numbers::pi);
  const double c = 0.044715;
  const double t = std::tanh(k * (x + c * x * x * x));
  return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * k * (1 + 3 * c * x * x);
}

}  // namespace

TEST_CASE("gelu_backward is grad_output times GELU's derivative, exact or tanh-approximated") {
  const Shape shape = {6, 7};
  for (const Device device : test_devices("gelu_backward.grad_input")) {
    for (const DType dtype : declared_dtypes<kernel_dtypes::gelu_backward_grad_input>()) {
      for (const Layout layout : kAllLayouts) {
        const Tensor grad = sample_tensor(shape, dtype, layout, 70, device);
        const Tensor self = sample_tensor(shape, dtype, Layout::Transposed, 71, device);
        const Values g = values_of(grad);
        const Values x = values_of(self);
        for (const char* approximate : {"none", "tanh"}) {
          INFO(device.str() << " " << name_of(dtype) << " " << name_of(layout) << " "
                            << approximate);
          const bool exact = std::string(approximate) == "none";
          Values expected, tolerance;
          for (size_t i = 0; i < g.size(); ++i) {
            expected.push_back(g[i] * (exact ? gelu_erf_derivative(x[i])
                                             : gelu_tanh_derivative(x[i])));
            tolerance.push_back(cancellation_tolerance(dtype, std::abs(g[i])));
          }
          check_tensor(bp::gelu_backward(grad, self, approximate), shape, dtype, expected,
                       tolerance);
        }
      }
    }
  }
}

TEST_CASE("gelu_backward's derivative is 1/2 at 0 and tends to 0 and 1 in the tails") {
  for (const Device device : test_devices("gelu_backward.grad_input")) {
    const Tensor x = make_tensor({0, -10, 10}, {3}, bp::kFloat32, device);
    const Tensor ones = bp::ones({3}, bp::kFloat32, device);
    check_tensor(bp::gelu_backward(ones, x), {3}, bp::kFloat32, {0.5, 0, 1}, 1e-6);
    check_tensor(bp::gelu_backward(ones, x, "tanh"), {3}, bp::kFloat32, {0.5, 0, 1}, 1e-6);
  }
}

TEST_CASE("threshold_backward passes grad_output where self exceeds the threshold") {
  const Shape shape = {5, 4};
  for (const Device device : test_devices("threshold_backward.grad_input")) {
    for (const DType dtype : declared_dtypes<kernel_dtypes::threshold_backward_grad_input>()) {
      for (const Layout layout : kAllLayouts) {
        INFO(device.str() << " " << name_of(dtype) << " " << name_of(layout));
        const Tensor grad = sample_tensor(shape, dtype, layout, 72, device);
        const Tensor self = sample_tensor(shape, dtype, Layout::Sliced, 73, device);
        const Values g = values_of(grad);
        const Values x = values_of(self);
        for (const double threshold : {0.0, 0.5}) {
          Values expected;
          for (size_t i = 0; i < g.size(); ++i) expected.push_back(x[i] <= threshold ? 0 : g[i]);
          check_tensor(bp::threshold_backward(grad, self, threshold), shape, dtype, expected);
        }
      }
    }
    INFO("a NaN self passes the gradient, as in PyTorch");
    const Tensor self = make_tensor({std::nan(""), -1}, {2}, bp::kFloat32, device);
    check_tensor(bp::threshold_backward(bp::ones({2}, bp::kFloat32, device), self, 0), {2},
                 bp::kFloat32, {1, 0});
  }
}

}  // namespace optest
