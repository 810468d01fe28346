// softmax and log_softmax. Rows (see groups.cuh) that fit in shared memory are read from
// device memory once: kept there while their maximum is found, then summed and written from
// there. Longer rows take an online pass (running maximum and sum, rescaled as the maximum
// grows) and a second read to write. Groups whose members are far apart while neighbouring
// groups are adjacent (softmax over a leading dimension) take one thread per group.
//
// Results follow the CPU backend's arithmetic: a NaN member, or an infinite maximum, makes the
// whole group NaN.
//
// Launched by softmax.cu; a header so that the host tests compile these kernels too
// (tests/cuda/emulated_launch.h).
#pragma once

#include "groups.cuh"

#include <limits>

namespace bp::cuda {
// Internal to each includer: the kernel library and the host tests each compile their own.
namespace {

// exp(from - to), except 1 where both are -inf: members equal to -inf then count as exp(0) while
// the maximum is -inf, and vanish (times exp(-inf)) once a finite maximum comes.
template <typename C>
__device__ __forceinline__ C rescale(C from, C to) {
  if (from == to && from == -std::numeric_limits<C>::infinity()) return C(1);
  return math_exp(from - to);
}

// The maximum of some members and the sum of exp(member - maximum) over them.
template <typename C>
struct RunningSum {
  C max;
  C sum;
};

template <typename C>
struct MergeRunningSums {
  __device__ RunningSum<C> operator()(const RunningSum<C>& a, const RunningSum<C>& b) const {
    const C max = Maximum{}(a.max, b.max);
    return {max, a.sum * rescale(a.max, max) + b.sum * rescale(b.max, max)};
  }
};

template <typename C>
__device__ __forceinline__ C normalized(C x, C max, C sum, C log_sum, bool logarithm) {
  const C shifted = x - max;
  return logarithm ? shifted - log_sum : math_exp(shifted) / sum;
}

template <typename T>
__global__ void __launch_bounds__(kMaxTeamThreads)
    softmax_rows(GroupShape<2> shape, const T* __restrict__ input, T* __restrict__ out, bool logarithm, bool cached) {
  using C = compute_t<T>;
  __shared__ RunningSum<C> warp_partials[kMaxTeamThreads / kWarpSize];
  __shared__ C warp_values[kMaxTeamThreads / kWarpSize];
  T* cache = slot_row_cache<T>(shape);
  const int lane = static_cast<int>(threadIdx.x);
  const int team = static_cast<int>(blockDim.x);
  const int64_t size = shape.group_size;
  for_each_slot_group(shape, [&](int64_t /*group*/, bool active, const int64_t (&at)[2]) {
    const T* in = input + at[0];
    T* o = out + at[1];
    C max, sum;
    if (cached) {
      max = -std::numeric_limits<C>::infinity();
      if (active) {
        for_members(in, shape, 0, size, lane, team, [&](T x, int64_t p) {
          cache[p] = x;
          max = Maximum{}(max, to_compute(x));
        });
      }
      max = team_reduce(max, Maximum{}, warp_values);
      __syncthreads();  // the whole row is in the cache
      sum = 0;
      for (int64_t p = lane; active && p < size; p += team) sum += math_exp(to_compute(cache[p]) - max);
      sum = team_reduce(sum, Plus{}, warp_values);
    } else {
      RunningSum<C> running{-std::numeric_limits<C>::infinity(), C(0)};
      if (active) {
        for_members(in, shape, 0, size, lane, team, [&](T x, int64_t) {
          running = MergeRunningSums<C>{}(running, RunningSum<C>{to_compute(x), C(1)});
        });
      }
      running = team_reduce(running, MergeRunningSums<C>{}, warp_partials);
      max = running.max;
      sum = running.sum;
    }
    const C log_sum = math_log(sum);
    for (int64_t p = lane; active && p < size; p += team) {
      const C x = cached ? to_compute(cache[p]) : to_compute(in[member_offset(shape, 0, p)]);
      o[member_offset(shape, 1, p)] = from_compute<T>(normalized(x, max, sum, log_sum, logarithm));
    }
    if (cached) __syncthreads();  // before the cache is filled again
  });
}

template <typename T>
__global__ void __launch_bounds__(kGroupBlockThreads)
    softmax_columns(GroupShape<2> shape, const T* __restrict__ input, T* __restrict__ out, bool logarithm) {
  using C = compute_t<T>;
  for (int64_t group = global_thread(); group < shape.groups; group += grid_threads()) {
    int64_t at[2];
    shape.kept.offsets(group, at);
    const T* in = input + at[0];
    C max = -std::numeric_limits<C>::infinity();
    for (int64_t p = 0; p < shape.group_size; ++p) max = Maximum{}(max, to_compute(in[member_offset(shape, 0, p)]));
    C sum = 0;
    for (int64_t p = 0; p < shape.group_size; ++p) sum += math_exp(to_compute(in[member_offset(shape, 0, p)]) - max);
    const C log_sum = math_log(sum);
    for (int64_t p = 0; p < shape.group_size; ++p) {
      const C x = to_compute(in[member_offset(shape, 0, p)]);
      out[at[1] + member_offset(shape, 1, p)] = from_compute<T>(normalized(x, max, sum, log_sum, logarithm));
    }
  }
}

}  // namespace
}  // namespace bp::cuda
