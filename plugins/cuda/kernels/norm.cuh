// Layer norm and RMS norm take each group's statistics in one read of the input (for layer norm,
// Welford's update per member, merged across a team), the group kept in shared memory when it
// fits so that normalising reads it from there rather than from device memory again. Both
// accumulate in float (double for Double).
//
// Launched by norm.cu; a header so that the host tests compile these kernels too
// (tests/cuda/emulated_launch.h).
#pragma once

#include "groups.cuh"

#include <limits>

namespace bp::cuda {
// Internal to each includer: the kernel library and the host tests each compile their own.
namespace {

template <typename Acc>
struct Moments {
  Acc count;
  Acc mean;
  Acc m2;  // the sum of squared deviations from the mean
};

template <typename Acc>
__device__ __forceinline__ Moments<Acc> with_member(Moments<Acc> m, Acc x) {
  m.count += Acc(1);
  const Acc delta = x - m.mean;
  m.mean += delta / m.count;
  m.m2 += delta * (x - m.mean);
  return m;
}

template <typename Acc>
struct MergeMoments {
  __device__ Moments<Acc> operator()(const Moments<Acc>& a, const Moments<Acc>& b) const {
    if (b.count == Acc(0)) return a;
    if (a.count == Acc(0)) return b;
    const Acc count = a.count + b.count;
    const Acc share = b.count / count;
    const Acc delta = b.mean - a.mean;
    return {count, a.mean + delta * share, a.m2 + b.m2 + delta * delta * a.count * share};
  }
};

template <typename T>
__global__ void __launch_bounds__(kMaxTeamThreads)
    layer_norm_rows(GroupShape<kNormOperands> shape, const T* __restrict__ input, T* __restrict__ out,
                    T* __restrict__ mean_out, T* __restrict__ rstd_out, const T* __restrict__ weight,
                    const T* __restrict__ bias, compute_t<T> eps, bool cached) {
  using Acc = compute_t<T>;
  __shared__ Moments<Acc> warp_partials[kMaxTeamThreads / kWarpSize];
  T* cache = slot_row_cache<T>(shape);
  const int lane = static_cast<int>(threadIdx.x);
  const int team = static_cast<int>(blockDim.x);
  const int64_t size = shape.group_size;
  for_each_slot_group(shape, [&](int64_t /*group*/, bool active, const int64_t (&at)[kNormOperands]) {
    const T* in = input + at[kNormInput];
    Moments<Acc> moments{Acc(0), Acc(0), Acc(0)};
    if (active) {
      for_members(in, shape, 0, size, lane, team, [&](T x, int64_t p) {
        if (cached) cache[p] = x;
        moments = with_member(moments, to_compute(x));
      });
    }
    moments = team_reduce(moments, MergeMoments<Acc>{}, warp_partials);
    if (cached) __syncthreads();  // the whole group is in the cache
    // Over no members, mean and variance are 0 / 0 = NaN, as in PyTorch.
    const Acc mean = size > 0 ? moments.mean : std::numeric_limits<Acc>::quiet_NaN();
    const Acc variance = size > 0 ? moments.m2 / moments.count : std::numeric_limits<Acc>::quiet_NaN();
    const Acc rstd = Acc(1) / math_sqrt(variance + eps);
    for (int64_t p = lane; active && p < size; p += team) {
      const T x = cached ? cache[p] : in[member_offset(shape, kNormInput, p)];
      Acc y = (to_compute(x) - mean) * rstd;
      if (weight) y *= to_compute(weight[at[kNormWeight] + member_offset(shape, kNormWeight, p)]);
      if (bias) y += to_compute(bias[at[kNormBias] + member_offset(shape, kNormBias, p)]);
      out[at[kNormOut] + member_offset(shape, kNormOut, p)] = from_compute<T>(y);
    }
    if (active && lane == 0) {
      mean_out[at[kNormMean]] = from_compute<T>(mean);
      rstd_out[at[kNormRstd]] = from_compute<T>(rstd);
    }
    if (cached) __syncthreads();  // before the cache is filled again
  });
}

template <typename T>
__global__ void __launch_bounds__(kMaxTeamThreads)
    rms_norm_rows(GroupShape<3> shape, const T* __restrict__ input, T* __restrict__ out,
                  const T* __restrict__ weight, compute_t<T> eps, bool cached) {
  using Acc = compute_t<T>;
  __shared__ Acc warp_partials[kMaxTeamThreads / kWarpSize];
  T* cache = slot_row_cache<T>(shape);
  const int lane = static_cast<int>(threadIdx.x);
  const int team = static_cast<int>(blockDim.x);
  const int64_t size = shape.group_size;
  for_each_slot_group(shape, [&](int64_t /*group*/, bool active, const int64_t (&at)[3]) {
    const T* in = input + at[0];
    Acc squares = 0;
    if (active) {
      for_members(in, shape, 0, size, lane, team, [&](T x, int64_t p) {
        if (cached) cache[p] = x;
        const Acc value = to_compute(x);
        squares += value * value;
      });
    }
    squares = team_reduce(squares, Plus{}, warp_partials);
    if (cached) __syncthreads();  // the whole group is in the cache
    const Acc factor = Acc(1) / math_sqrt(squares / static_cast<Acc>(size) + eps);
    for (int64_t p = lane; active && p < size; p += team) {
      const T x = cached ? cache[p] : in[member_offset(shape, 0, p)];
      Acc y = to_compute(x) * factor;
      if (weight) y *= to_compute(weight[at[2] + member_offset(shape, 2, p)]);
      out[at[1] + member_offset(shape, 1, p)] = from_compute<T>(y);
    }
    if (cached) __syncthreads();  // before the cache is filled again
  });
}

}  // namespace
}  // namespace bp::cuda
