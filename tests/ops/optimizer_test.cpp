// The optimizer steps _sgd_step and _adamw_step: PyTorch's update rules in double from the
// tensors' current values, in place on parameters and state of any layout.
#include "op_test_support.h"

#include <cmath>

namespace optest {
namespace {

struct SgdCase {
  double lr, momentum, dampening, weight_decay;
  bool nesterov;
};

// torch.optim.SGD's step for one element: the new param and momentum buffer.
std::pair<double, double> sgd_reference(const SgdCase& c, bool first_step, double p, double g,
                                        double b) {
  double d = g + c.weight_decay * p;
  double buffer = d;
  if (c.momentum != 0) {
    if (!first_step) buffer = c.momentum * b + (1 - c.dampening) * d;
    d = c.nesterov ? d + c.momentum * buffer : buffer;
  }
  return {p - c.lr * d, buffer};
}

// A tensor of `sizes` whose memory is not row-major: the optimizer writes it through a
// temporary.
Tensor strided_state(const Shape& sizes, DType dtype, uint64_t seed, Device device) {
  return sample_tensor(sizes, dtype, Layout::Transposed, seed, device);
}

}  // namespace

TEST_CASE("_sgd_step: plain, with momentum, dampening, weight decay and nesterov") {
  const SgdCase cases[] = {{0.1, 0, 0, 0, false},
                           {0.1, 0.9, 0, 0, false},
                           {0.05, 0.9, 0.1, 0.01, false},
                           {0.1, 0.8, 0, 0.001, true}};
  const Shape shape = {6, 5};
  for (const Device device : test_devices("_sgd_step.out")) {
    for (const DType dtype : declared_dtypes<kernel_dtypes::_sgd_step_out>()) {
      for (const SgdCase& c : cases) {
        for (const bool first_step : {true, false}) {
          for (const bool strided : {false, true}) {
            INFO(device.str() << " " << name_of(dtype) << " lr " << c.lr << " momentum "
                              << c.momentum << " dampening " << c.dampening << " weight decay "
                              << c.weight_decay << " nesterov " << c.nesterov << " first step "
                              << first_step << " strided " << strided);
            Tensor param = strided ? strided_state(shape, dtype, 130, device)
                                   : sample_tensor(shape, dtype, Layout::Contiguous, 130, device);
            Tensor buffer = strided ? strided_state(shape, dtype, 131, device)
                                    : sample_tensor(shape, dtype, Layout::Contiguous, 131, device);
            const Tensor grad = sample_tensor(shape, dtype, Layout::Sliced, 132, device);
            const Values p = values_of(param), g = values_of(grad), b = values_of(buffer);
            Values new_p, new_b;
            for (size_t i = 0; i < p.size(); ++i) {
              const auto [np, nb] = sgd_reference(c, first_step, p[i], g[i], b[i]);
              new_p.push_back(np);
              new_b.push_back(nb);
            }
            bp::_sgd_step_out(param, buffer, param, grad, buffer, c.lr, c.momentum, c.dampening,
                              c.weight_decay, c.nesterov, first_step);
            check_tensor(param, shape, dtype, new_p, cancellation_tolerance(dtype, 8));
            check_tensor(buffer, shape, dtype, new_b, cancellation_tolerance(dtype, 8));
          }
        }
      }
    }
  }
}

TEST_CASE("_adamw_step over three steps, from the state each step leaves") {
  const double lr = 0.01, beta1 = 0.9, beta2 = 0.999, weight_decay = 0.1, eps = 1e-8;
  const Shape shape = {4, 7};
  for (const Device device : test_devices("_adamw_step.out")) {
    for (const DType dtype : declared_dtypes<kernel_dtypes::_adamw_step_out>()) {
      for (const bool strided : {false, true}) {
        INFO(device.str() << " " << name_of(dtype) << " strided " << strided);
        Tensor param = strided ? strided_state(shape, dtype, 140, device)
                               : sample_tensor(shape, dtype, Layout::Contiguous, 140, device);
        Tensor exp_avg = bp::zeros(shape, dtype, device);
        Tensor exp_avg_sq = strided ? strided_state(shape, dtype, 141, device)
                                    : bp::zeros(shape, dtype, device);
        exp_avg_sq.fill_(0);
        for (int64_t step = 1; step <= 3; ++step) {
          INFO("step " << step);
          const Tensor grad = sample_tensor(shape, dtype, Layout::Sliced, 142 + step, device);
          const Values p = values_of(param), g = values_of(grad), m = values_of(exp_avg),
                       v = values_of(exp_avg_sq);
          Values new_p, new_m, new_v;
          const double correction1 = 1 - std::pow(beta1, step);
          const double correction2 = 1 - std::pow(beta2, step);
          for (size_t i = 0; i < p.size(); ++i) {
            const double mi = m[i] + (1 - beta1) * (g[i] - m[i]);
            const double vi = beta2 * v[i] + (1 - beta2) * g[i] * g[i];
            const double denominator = std::sqrt(vi) / std::sqrt(correction2) + eps;
            new_p.push_back(p[i] * (1 - lr * weight_decay) - lr / correction1 * mi / denominator);
            new_m.push_back(mi);
            new_v.push_back(vi);
          }
          bp::_adamw_step_out(param, exp_avg, exp_avg_sq, param, grad, exp_avg, exp_avg_sq, lr,
                              beta1, beta2, weight_decay, eps, step);
          check_tensor(param, shape, dtype, new_p, cancellation_tolerance(dtype, 8));
          check_tensor(exp_avg, shape, dtype, new_m, cancellation_tolerance(dtype, 4));
          check_tensor(exp_avg_sq, shape, dtype, new_v, cancellation_tolerance(dtype, 16));
        }
      }
    }
  }
}

TEST_CASE("_sgd_step on a parameter large enough to be split across threads") {
  const Shape shape = {300, 257};
  for (const Device device : test_devices("_sgd_step.out")) {
    Tensor param = sample_tensor(shape, bp::kFloat32, Layout::Contiguous, 150, device);
    Tensor buffer = sample_tensor(shape, bp::kFloat32, Layout::Contiguous, 151, device);
    const Tensor grad = sample_tensor(shape, bp::kFloat32, Layout::Contiguous, 152, device);
    const Values p = values_of(param), g = values_of(grad), b = values_of(buffer);
    Values new_p;
    for (size_t i = 0; i < p.size(); ++i) {
      new_p.push_back(sgd_reference({0.1, 0.9, 0, 0, false}, false, p[i], g[i], b[i]).first);
    }
    bp::_sgd_step_out(param, buffer, param, grad, buffer, 0.1, 0.9, 0, 0, false, false);
    check_tensor(param, shape, bp::kFloat32, new_p, 1e-5);
  }
}

}  // namespace optest
