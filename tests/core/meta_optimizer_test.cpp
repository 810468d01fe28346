// The optimizer steps' checks: state of the parameter's shape and dtype, hyperparameters in
// torch.optim's ranges.
#include "core_test_support.h"

using namespace bp;
using coretest::check_invalid_argument;

TEST_CASE("_sgd_step refuses state unlike the parameter and hyperparameters out of range") {
  Tensor param = zeros({2, 3});
  Tensor buffer = zeros({2, 3});
  const auto step = [&](const Tensor& grad, double lr, double momentum, double dampening,
                        bool nesterov) {
    _sgd_step_out(param, buffer, param, grad, buffer, lr, momentum, dampening, 0.0, nesterov,
                  false);
  };
  step(ones({2, 3}), 0.1, 0.9, 0, true);
  check_invalid_argument([&] { step(ones({3, 2}), 0.1, 0, 0, false); },
                         {"_sgd_step: expected grad of param's shape [2, 3], got [3, 2]"});
  check_invalid_argument([&] { step(ones({2, 3}, kFloat64), 0.1, 0, 0, false); },
                         {"_sgd_step: grad has dtype Double but the input has Float"});
  check_invalid_argument([&] { step(ones({2, 3}), -1, 0, 0, false); },
                         {"_sgd_step: lr must be in [0, inf), got -1"});
  check_invalid_argument([&] { step(ones({2, 3}), 0.1, 0.9, 0.5, true); },
                         {"nesterov momentum needs a momentum above 0 and dampening 0, got "
                          "momentum 0.9 and dampening 0.5"});
  Tensor ints = zeros({2}, kInt64);
  check_invalid_argument(
      [&] { _sgd_step_out(ints, ints, ints, ints, ints, 0.1, 0.0, 0.0, 0.0, false, false); },
      {"_sgd_step.out takes Float32, Float64, Float16 or BFloat16, but param is Int64"});
}

TEST_CASE("_adamw_step refuses betas outside [0, 1) and steps below 1") {
  Tensor param = zeros({4});
  Tensor m = zeros({4});
  Tensor v = zeros({4});
  const auto step = [&](double beta1, double beta2, int64_t count) {
    _adamw_step_out(param, m, v, param, ones({4}), m, v, 1e-3, beta1, beta2, 0.01, 1e-8, count);
  };
  step(0.9, 0.999, 1);
  check_invalid_argument([&] { step(1.0, 0.999, 1); },
                         {"_adamw_step: beta1 must be in [0, 1), got 1"});
  check_invalid_argument([&] { step(0.9, -0.1, 1); }, {"beta2 must be in [0, 1), got -0.1"});
  check_invalid_argument([&] { step(0.9, 0.999, 0); },
                         {"_adamw_step: step counts from 1, got 0"});
  check_invalid_argument(
      [&] {
        _adamw_step_out(param, m, v, param, ones({4}), zeros({3}), v, 1e-3, 0.9, 0.999, 0, 1e-8,
                        1);
      },
      {"expected exp_avg of param's shape [4], got [3]"});
}
