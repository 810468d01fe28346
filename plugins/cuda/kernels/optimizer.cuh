// The optimizer steps: one thread per element of a parameter, reading the element of each input
// before writing those of the outputs (which may be the inputs), in the compute type. PyTorch's
// update rules (torch.optim.SGD; torch.optim.AdamW without amsgrad), as the CPU backend writes
// them.
//
// Launched by optimizer.cu; a header so that the host tests compile these kernels too
// (tests/cuda/emulated_launch.h).
#pragma once

#include "kernels/device_support.cuh"

namespace bp::cuda {
// Internal to each includer: the kernel library and the host tests each compile their own.
namespace {

constexpr int kOptimizerThreads = 256;

// The N operands of a step, all of T.
template <typename T, int N>
struct StepOperands {
  T* data[N];
};

// Operands: param_out, momentum_buffer_out, param, grad, momentum_buffer. d = grad +
// weight_decay * param; with momentum, buffer = d on the first step, else momentum * buffer +
// (1 - dampening) * d, and d becomes d + momentum * buffer (nesterov) or buffer; param -= lr * d.
// Without momentum the buffer is not read and receives d.
template <typename C>
struct SgdUpdate {
  C lr, momentum, dampening, weight_decay;
  bool nesterov, first_step;

  template <typename T>
  __device__ void operator()(const StepOperands<T, 5>& p, const int64_t (&at)[5]) const {
    const C param = to_compute(p.data[2][at[2]]);
    C d = to_compute(p.data[3][at[3]]);
    if (weight_decay != 0) d += weight_decay * param;
    C buffer = d;
    if (momentum != 0 && !first_step)
      buffer = momentum * to_compute(p.data[4][at[4]]) + (C(1) - dampening) * d;
    if (momentum != 0) d = nesterov ? d + momentum * buffer : buffer;
    p.data[0][at[0]] = from_compute<T>(param - lr * d);
    p.data[1][at[1]] = from_compute<T>(buffer);
  }
};

// Operands: param_out, exp_avg_out, exp_avg_sq_out, param, grad, exp_avg, exp_avg_sq.
// param *= 1 - lr * weight_decay; exp_avg += (1 - beta1) (grad - exp_avg); exp_avg_sq =
// beta2 exp_avg_sq + (1 - beta2) grad^2; param -= step_size exp_avg / (sqrt(exp_avg_sq) /
// sqrt(1 - beta2^step) + eps), step_size = lr / (1 - beta1^step).
template <typename C>
struct AdamwUpdate {
  C decay, beta1, beta2, step_size, bias_correction2_root, eps;

  template <typename T>
  __device__ void operator()(const StepOperands<T, 7>& p, const int64_t (&at)[7]) const {
    const C param = to_compute(p.data[3][at[3]]);
    const C g = to_compute(p.data[4][at[4]]);
    const C m = to_compute(p.data[5][at[5]]);
    const C v = to_compute(p.data[6][at[6]]);
    const C new_m = m + (C(1) - beta1) * (g - m);
    const C new_v = beta2 * v + (C(1) - beta2) * g * g;
    const C denominator = math_sqrt(new_v) / bias_correction2_root + eps;
    p.data[0][at[0]] = from_compute<T>(param * decay - step_size * new_m / denominator);
    p.data[1][at[1]] = from_compute<T>(new_m);
    p.data[2][at[2]] = from_compute<T>(new_v);
  }
};

template <typename T, int N, typename Update>
__global__ void __launch_bounds__(kOptimizerThreads)
    optimizer_step(StridedShape<N> shape, int64_t numel, StepOperands<T, N> operands,
                   Update update) {
  for (int64_t i = global_thread(); i < numel; i += grid_threads()) {
    int64_t at[N];
    shape.offsets(i, at);
    update(operands, at);
  }
}

}  // namespace
}  // namespace bp::cuda
