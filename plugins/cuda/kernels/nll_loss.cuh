// The negative log-likelihood loss and its gradient. The forward is one block: each thread sums
// every kLossThreads-th sample and the block combines the sums in a fixed order; the backward is
// one thread per sample, each writing its target's element (the rest is zeroed first). Sums in
// double, as the CPU backend's. A target that is neither ignore_index nor a class is recorded at
// its first sample, as gather records an index (gather.cuh).
//
// Launched by nll_loss.cu; a header so that the host tests compile these kernels too
// (tests/cuda/emulated_launch.h).
#pragma once

#include "kernels/gather.cuh"

namespace bp::cuda {
// Internal to each includer: the kernel library and the host tests each compile their own.
namespace {

constexpr int kLossThreads = 256;

// -weight[t] * self[i, t] and weight[t] for sample i, or false where the sample is ignored or its
// target is no class (recorded).
template <typename T>
__device__ __forceinline__ bool sample_term(const NllLoss& loss, int64_t i, IndexError* error,
                                            double& term, double& weight) {
  const int64_t t = loss.target[i];
  if (t == loss.ignore_index) return false;
  if (t < 0 || t >= loss.classes) {
    atomicMin(&error->first_position, static_cast<unsigned long long>(i));
    return false;
  }
  weight =
      loss.weight ? static_cast<double>(to_compute(static_cast<const T*>(loss.weight)[t])) : 1.0;
  term = -weight *
         static_cast<double>(to_compute(static_cast<const T*>(loss.self)[i * loss.classes + t]));
  return true;
}

// One block of kLossThreads threads.
template <typename T>
__global__ void __launch_bounds__(kLossThreads)
    nll_loss_forward(NllLoss loss, T* __restrict__ output, T* __restrict__ total_weight,
                     IndexError* error) {
  __shared__ double warp_partials[kMaxTeamThreads / kWarpSize];
  double loss_sum = 0, weight_sum = 0;
  for (int64_t i = threadIdx.x; i < loss.samples; i += blockDim.x) {
    double term = 0, weight = 0;
    const bool counted = sample_term<T>(loss, i, error, term, weight);
    if (!loss.reduce) {
      output[i] = from_compute<T>(counted ? term : 0.0);
    } else if (counted) {
      loss_sum += term;
      weight_sum += weight;
    }
  }
  loss_sum = team_reduce(loss_sum, Plus{}, warp_partials);
  weight_sum = team_reduce(weight_sum, Plus{}, warp_partials);
  if (threadIdx.x != 0) return;
  // Every sample ignored: the mean is 0 / 0 = NaN, as in PyTorch.
  if (loss.reduce) output[0] = from_compute<T>(loss.mean ? loss_sum / weight_sum : loss_sum);
  total_weight[0] = from_compute<T>(loss.reduce ? weight_sum : 0.0);
}

// grad_input (dense, zeroed) at each sample's target: -weight[t] * grad, grad being grad_output's
// element of the sample (`per_sample`) or its only one, divided by total_weight for the mean.
template <typename T>
__global__ void __launch_bounds__(kLossThreads)
    nll_loss_backward(NllLoss loss, const T* __restrict__ grad_output, bool per_sample,
                      const T* __restrict__ total_weight, T* __restrict__ grad_input,
                      IndexError* error) {
  for (int64_t i = global_thread(); i < loss.samples; i += grid_threads()) {
    double term = 0, weight = 0;
    if (!sample_term<T>(loss, i, error, term, weight)) continue;
    const double divisor = loss.mean ? static_cast<double>(to_compute(total_weight[0])) : 1.0;
    const double gradient =
        static_cast<double>(to_compute(grad_output[per_sample ? i : 0])) / divisor;
    grad_input[i * loss.classes + loss.target[i]] = from_compute<T>(-weight * gradient);
  }
}

}  // namespace
}  // namespace bp::cuda
