// Launches of the optimizer steps (optimizer.cuh).
#include "kernels/elementwise_launch.cuh"
#include "kernels/optimizer.cuh"

#include <cmath>

namespace bp::cuda {
namespace {

template <typename T, int N, typename Update>
void launch_step(const ElementwiseLaunch<N>& launch, const Update& update, const char* name) {
  if (launch.numel == 0) return;
  StepOperands<T, N> operands;
  for (int k = 0; k < N; ++k) operands.data[k] = static_cast<T*>(launch.data[k]);
  const LaunchTarget& target = launch.target;
  optimizer_step<T, N><<<grid_blocks(launch.numel, kOptimizerThreads, target), kOptimizerThreads, 0,
                         target.stream>>>(shape_of(launch), launch.numel, operands, update);
  check_launch(name);
}

}  // namespace

void launch_sgd_step(DType dtype, const ElementwiseLaunch<5>& launch, const SgdStep& step) {
  plugin::visit_dtype<kernel_dtypes::_sgd_step_out>(dtype, [&](auto tag) {
    using T = device_t<typename decltype(tag)::type>;
    using C = compute_t<T>;
    const SgdUpdate<C> update{static_cast<C>(step.lr),
                              static_cast<C>(step.momentum),
                              static_cast<C>(step.dampening),
                              static_cast<C>(step.weight_decay),
                              step.nesterov,
                              step.first_step};
    launch_step<T>(launch, update, "sgd_step");
  });
}

void launch_adamw_step(DType dtype, const ElementwiseLaunch<7>& launch, const AdamwStep& step) {
  const auto steps = static_cast<double>(step.step);
  plugin::visit_dtype<kernel_dtypes::_adamw_step_out>(dtype, [&](auto tag) {
    using T = device_t<typename decltype(tag)::type>;
    using C = compute_t<T>;
    const AdamwUpdate<C> update{static_cast<C>(1 - step.lr * step.weight_decay),
                                static_cast<C>(step.beta1),
                                static_cast<C>(step.beta2),
                                static_cast<C>(step.lr / (1 - std::pow(step.beta1, steps))),
                                static_cast<C>(std::sqrt(1 - std::pow(step.beta2, steps))),
                                static_cast<C>(step.eps)};
    launch_step<T>(launch, update, "adamw_step");
  });
}

}  // namespace bp::cuda
