// Training batch norm and its gradient: one team per channel, walking the channel's members (its
// elements over the batch and the spatial dims) with their strides. The statistics take two
// passes, as layer norm's (norm.cuh): deviations from the channel's first member for the mean,
// then squared deviations from the mean for the variance. Both accumulate in float (double for
// Double), combined in a fixed order.
//
// Launched by batch_norm.cu; a header so that the host tests compile these kernels too
// (tests/cuda/emulated_launch.h).
#pragma once

#include "kernels/groups.cuh"

namespace bp::cuda {
// Internal to each includer: the kernel library and the host tests each compile their own.
namespace {

// Element c of a per-channel vector in the compute type, or `absent` where there is none.
template <typename T>
__device__ __forceinline__ compute_t<T> channel_value(const ChannelVector& vector, int64_t c,
                                                      compute_t<T> absent) {
  if (!vector.data) return absent;
  return to_compute(static_cast<const T*>(vector.data)[c * vector.stride]);
}

template <typename T>
__device__ __forceinline__ void write_channel(const ChannelVector& vector, int64_t c,
                                              compute_t<T> value) {
  static_cast<T*>(vector.data)[c * vector.stride] = from_compute<T>(value);
}

// The groups are the channels: the only kept dimension is dim 1, so group c is channel c.
template <typename T>
__global__ void __launch_bounds__(kMaxTeamThreads)
    batch_norm_training(GroupShape<2> shape, const T* __restrict__ input, T* __restrict__ out,
                        ChannelVector weight, ChannelVector bias, ChannelVector save_mean,
                        ChannelVector save_invstd, compute_t<T> eps) {
  using Acc = compute_t<T>;
  __shared__ Acc warp_partials[kMaxTeamThreads / kWarpSize];
  const int lane = static_cast<int>(threadIdx.x);
  const int team = static_cast<int>(blockDim.x);
  const int64_t size = shape.group_size;
  for_each_slot_group(shape, [&](int64_t channel, bool active, const int64_t(&at)[2]) {
    const T* in = input + at[0];
    const int64_t members = active ? size : 0;
    const auto x_at = [&](int64_t p) { return to_compute(in[member_offset(shape, 0, p)]); };
    const Acc shift = members > 0 ? to_compute(in[0]) : Acc(0);
    Acc deviations = 0;
    for (int64_t p = lane; p < members; p += team) deviations += x_at(p) - shift;
    // Over no members, mean and variance are 0 / 0 = NaN, as in PyTorch.
    const Acc mean =
        shift + team_reduce(deviations, Plus{}, warp_partials) / static_cast<Acc>(size);
    Acc squares = 0;
    for (int64_t p = lane; p < members; p += team) {
      const Acc deviation = x_at(p) - mean;
      squares += deviation * deviation;
    }
    const Acc variance = team_reduce(squares, Plus{}, warp_partials) / static_cast<Acc>(size);
    const Acc invstd = Acc(1) / math_sqrt(variance + eps);
    if (!active) return;
    const Acc scale = channel_value<T>(weight, channel, Acc(1));
    const Acc offset = channel_value<T>(bias, channel, Acc(0));
    for (int64_t p = lane; p < members; p += team) {
      out[at[1] + member_offset(shape, 1, p)] =
          from_compute<T>((x_at(p) - mean) * invstd * scale + offset);
    }
    if (lane == 0) {
      write_channel<T>(save_mean, channel, mean);
      write_channel<T>(save_invstd, channel, invstd);
    }
  });
}

// Operands: grad_out, input, grad_input. With x^ = (x - mean) * invstd: grad_bias = sum(g),
// grad_weight = sum(g x^), and grad_input = (g - mean(g) - x^ mean(g x^)) * invstd * weight when
// training, else g * invstd * weight.
template <typename T>
__global__ void __launch_bounds__(kMaxTeamThreads)
    batch_norm_gradient(GroupShape<3> shape, const T* __restrict__ grad_out,
                        const T* __restrict__ input, T* __restrict__ grad_input,
                        ChannelVector weight, ChannelVector mean_of, ChannelVector invstd_of,
                        bool invstd_from_variance, bool training, compute_t<T> eps,
                        ChannelVector grad_weight, ChannelVector grad_bias) {
  using Acc = compute_t<T>;
  __shared__ Acc warp_partials[kMaxTeamThreads / kWarpSize];
  const int lane = static_cast<int>(threadIdx.x);
  const int team = static_cast<int>(blockDim.x);
  const int64_t size = shape.group_size;
  for_each_slot_group(shape, [&](int64_t channel, bool active, const int64_t(&at)[3]) {
    const int64_t members = active ? size : 0;
    Acc mean = 0, invstd = 0;
    if (active) {
      mean = channel_value<T>(mean_of, channel, Acc(0));
      const Acc stored = channel_value<T>(invstd_of, channel, Acc(0));
      invstd = invstd_from_variance ? Acc(1) / math_sqrt(stored + eps) : stored;
    }
    const auto g_at = [&](int64_t p) {
      return to_compute(grad_out[at[0] + member_offset(shape, 0, p)]);
    };
    const auto x_at = [&](int64_t p) {
      return to_compute(input[at[1] + member_offset(shape, 1, p)]);
    };
    Acc g_sum = 0, gx_sum = 0;  // sum(g) and sum(g (x - mean))
    for (int64_t p = lane; p < members; p += team) {
      const Acc g = g_at(p);
      g_sum += g;
      gx_sum += g * (x_at(p) - mean);
    }
    g_sum = team_reduce(g_sum, Plus{}, warp_partials);
    gx_sum = team_reduce(gx_sum, Plus{}, warp_partials);
    if (!active) return;
    if (lane == 0) {
      write_channel<T>(grad_weight, channel, gx_sum * invstd);
      write_channel<T>(grad_bias, channel, g_sum);
    }
    const Acc scale = invstd * channel_value<T>(weight, channel, Acc(1));
    const Acc g_mean = training ? g_sum / static_cast<Acc>(size) : Acc(0);
    const Acc projection = training ? gx_sum * invstd * invstd / static_cast<Acc>(size) : Acc(0);
    for (int64_t p = lane; p < members; p += team) {
      const Acc g = g_at(p);
      const Acc centred = training ? g - g_mean - (x_at(p) - mean) * projection : g;
      grad_input[at[2] + member_offset(shape, 2, p)] = from_compute<T>(centred * scale);
    }
  });
}

}  // namespace
}  // namespace bp::cuda
