// softmax and log_softmax, and their gradients (at the end). Rows (see groups.cuh) that fit in
// shared memory are read from device memory once: kept there while their maximum is found, then
// summed and written from there. Longer rows take an online pass (running maximum and sum,
// rescaled as the maximum grows) and a second read to write. Groups whose members are far apart
// while neighbouring groups are adjacent (softmax over a leading dimension) take one thread per
// group.
//
// Results follow the CPU backend's arithmetic: a NaN member, or an infinite maximum, makes the
// whole group NaN.
//
// Launched by softmax.cu; a header so that the host tests compile these kernels too
// (tests/cuda/emulated_launch.h).
#pragma once

#include "kernels/groups.cuh"
#include "kernels/register_rows.cuh"

#include <iterator>
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

// The cached path keeps a group's members in the compute type, and after the sum replaces each by
// exp(x - max) (softmax) or x - max (log_softmax), so that the write multiplies by the reciprocal
// of the sum or subtracts its logarithm, with no second exp and no division per member. Each
// thread reads back only the members it cached, walking the same spans, so the passes need no
// barrier of their own.
template <typename T>
__global__ void __launch_bounds__(kMaxTeamThreads)
    softmax_rows(GroupShape<2> shape, const T* __restrict__ input, T* __restrict__ out,
                 bool logarithm, bool cached) {
  using C = compute_t<T>;
  __shared__ RunningSum<C> warp_partials[kMaxTeamThreads / kWarpSize];
  __shared__ C warp_values[kMaxTeamThreads / kWarpSize];
  C* cache_row = slot_row_cache<C>(shape);
  const int lane = static_cast<int>(threadIdx.x);
  const int team = static_cast<int>(blockDim.x);
  const int64_t size = shape.group_size;
  for_each_slot_group(shape, [&](int64_t /*group*/, bool active, const int64_t(&at)[2]) {
    const T* in = input + at[0];
    MemberSpans<kVectorWidth<T>> spans{};
    if (active) spans = member_spans(in, shape, 0, size, 1u << 0 | 1u << 1);
    const auto source = group_operand(in, shape, 0, spans);
    const auto cache = cached_group(cache_row, shape, spans);
    const auto destination = group_operand(out + at[1], shape, 1, spans);
    const auto read = [&](auto width, int64_t p) { return to_compute(source.load(width, p)); };
    const auto cached_members = [&](auto width, int64_t p) { return cache.load(width, p); };
    C max = -std::numeric_limits<C>::infinity();
    if (cached) {
      for_spans(spans, lane, team, read, [&](const auto& x, int64_t p) {
        cache.store(p, x);
        for (const C value : x.v) max = Maximum{}(max, value);
      });
      max = team_reduce(max, Maximum{}, warp_values);
      C sum = 0;
      for_spans(spans, lane, team, cached_members, [&](const auto& x, int64_t p) {
        cache.store(p, each(x, [&](C value) {
                      const C shifted = value - max;
                      const C exp = math_exp(shifted);
                      sum += exp;
                      return logarithm ? shifted : exp;
                    }));
      });
      sum = team_reduce(sum, Plus{}, warp_values);
      const C log_sum = math_log(sum);
      const C reciprocal = C(1) / sum;
      for_spans(spans, lane, team, cached_members, [&](const auto& x, int64_t p) {
        destination.store(p, from_compute<T>(each(x, [&](C value) {
                            return logarithm ? value - log_sum : value * reciprocal;
                          })));
      });
      // The next group's spans may fall differently: every thread finishes reading its members
      // first.
      __syncthreads();
      return;
    }
    RunningSum<C> running{max, C(0)};
    for_spans(spans, lane, team, read, [&](const auto& x, int64_t) {
      for (const C value : x.v)
        running = MergeRunningSums<C>{}(running, RunningSum<C>{value, C(1)});
    });
    running = team_reduce(running, MergeRunningSums<C>{}, warp_partials);
    const C log_sum = math_log(running.sum);
    for_spans(spans, lane, team, read, [&](const auto& x, int64_t p) {
      destination.store(p, from_compute<T>(each(x, [&](C value) {
                          return normalized(value, running.max, running.sum, log_sum, logarithm);
                        })));
    });
  });
}

// Rows held in registers (register_rows.cuh), with the cached path's arithmetic: each member
// replaced by exp(x - max) (softmax) or x - max (log_softmax) as the sum is taken, then written
// times the sum's reciprocal or less its logarithm.
template <typename T, int kTeam, int kVectors>
__global__ void __launch_bounds__(kRegisterRowBlock<kTeam>)
                                      softmax_register_rows(GroupShape<2> shape,
                                                            const T* __restrict__ input,
                                                            T* __restrict__ out, bool logarithm) {
  using C = compute_t<T>;
  constexpr int V = kVectorWidth<T>;
  __shared__ C exchange[2][TeamReducer<kTeam, C>::kWarps];
  TeamReducer<kTeam, C> reduce{exchange};
  for_each_register_row<kTeam, kVectors>(shape, input, [&](const int64_t(&at)[2], auto& row) {
    const C max =
        reduce(row.fold(
                   -std::numeric_limits<C>::infinity(), [](C a, C b) { return number_max(a, b); },
                   [](C value) { return value; }),
               [](C a, C b) { return number_max(a, b); });
    C sum = 0;
#pragma unroll
    for (int i = 0; i < kVectors; ++i) {
      if (!row.holds(i)) continue;
#pragma unroll
      for (int e = 0; e < V; ++e) {
        const C shifted = row.x[i].v[e] - max;
        const C exp = math_exp(shifted);
        sum += exp;
        row.x[i].v[e] = logarithm ? shifted : exp;
      }
    }
    sum = reduce(sum, Plus{});
    const C log_sum = math_log(sum);
    const C reciprocal = C(1) / sum;
#pragma unroll
    for (int i = 0; i < kVectors; ++i) {
      if (!row.holds(i)) continue;
      store_vector<T>(out + at[1] + row.at(i), each(row.x[i], [&](C value) {
                        return logarithm ? value - log_sum : value * reciprocal;
                      }));
    }
  });
}

template <typename T>
__global__ void __launch_bounds__(kGroupBlockThreads)
    softmax_columns(GroupShape<2> shape, const T* __restrict__ input, T* __restrict__ out,
                    bool logarithm) {
  using C = compute_t<T>;
  for (int64_t group = global_thread(); group < shape.groups; group += grid_threads()) {
    int64_t at[2];
    shape.kept.offsets(group, at);
    const T* in = input + at[0];
    C max = -std::numeric_limits<C>::infinity();
    for (int64_t p = 0; p < shape.group_size; ++p)
      max = Maximum{}(max, to_compute(in[member_offset(shape, 0, p)]));
    C sum = 0;
    for (int64_t p = 0; p < shape.group_size; ++p)
      sum += math_exp(to_compute(in[member_offset(shape, 0, p)]) - max);
    const C log_sum = math_log(sum);
    for (int64_t p = 0; p < shape.group_size; ++p) {
      const C x = to_compute(in[member_offset(shape, 0, p)]);
      out[at[1] + member_offset(shape, 1, p)] =
          from_compute<T>(normalized(x, max, sum, log_sum, logarithm));
    }
  }
}

// Two operands' members at one position, W of each, in the compute type.
template <typename C, int W>
struct MemberPair {
  Vec<C, W> first;
  Vec<C, W> second;
};

template <typename C, int W>
__device__ __forceinline__ MemberPair<C, W> member_pair(const Vec<C, W>& first,
                                                        const Vec<C, W>& second) {
  return {first, second};
}

// The gradient from softmax's output y and its gradient g: g_in = y (g - sum(g y)); from
// log_softmax's: g_in = g - exp(y) sum(g). One team per group, reading both operands twice (once
// for the sum, once to write). Operands: grad_output, output, grad_input.
template <typename T>
__global__ void __launch_bounds__(kMaxTeamThreads)
    softmax_backward_rows(GroupShape<3> shape, const T* __restrict__ grad_output,
                          const T* __restrict__ output, T* __restrict__ grad_input,
                          bool logarithm) {
  using C = compute_t<T>;
  __shared__ C warp_values[kMaxTeamThreads / kWarpSize];
  const int lane = static_cast<int>(threadIdx.x);
  const int team = static_cast<int>(blockDim.x);
  const int64_t size = shape.group_size;
  for_each_slot_group(shape, [&](int64_t /*group*/, bool active, const int64_t(&at)[3]) {
    const T* g = grad_output + at[0];
    MemberSpans<kVectorWidth<T>> spans{};
    if (active) spans = member_spans(g, shape, 0, size, 1u << 0 | 1u << 1 | 1u << 2);
    const auto grads = group_operand(g, shape, 0, spans);
    const auto outputs = group_operand(output + at[1], shape, 1, spans);
    const auto destination = group_operand(grad_input + at[2], shape, 2, spans);
    const auto read = [&](auto width, int64_t p) {
      return member_pair(to_compute(grads.load(width, p)), to_compute(outputs.load(width, p)));
    };
    C total = 0;
    for_spans(spans, lane, team, read, [&](const auto& members, int64_t) {
      for (size_t e = 0; e < std::size(members.first.v); ++e)
        total += logarithm ? members.first.v[e] : members.first.v[e] * members.second.v[e];
    });
    total = team_reduce(total, Plus{}, warp_values);
    for_spans(spans, lane, team, read, [&](const auto& members, int64_t p) {
      destination.store(p, from_compute<T>(each(members.first, members.second, [&](C dy, C y) {
                          return logarithm ? dy - math_exp(y) * total : y * (dy - total);
                        })));
    });
  });
}

}  // namespace
}  // namespace bp::cuda
