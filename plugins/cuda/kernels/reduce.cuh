// Reductions: sum and mean, and the maximum with its position (amax, max.dim, argmax), each a
// policy run by one row-layout and one column-layout kernel (see groups.cuh).
//
// Launched by reduce.cu; a header so that the host tests compile these kernels too
// (tests/cuda/emulated_launch.h).
#pragma once

#include "kernels/groups.cuh"

namespace bp::cuda {
// Internal to each includer: the kernel library and the host tests each compile their own.
namespace {

// sum and mean: floating dtypes accumulate in float (double for Double), integers and Bool in
// int64, wrapped to the output's dtype at the end as PyTorch does.
template <typename T>
struct SumPolicy {
  static constexpr int kOperands = 2;
  using Acc = std::conditional_t<kIsFloating<T>, compute_t<T>, int64_t>;
  T* out;
  bool average;
  int64_t group_size;

  __device__ Acc identity() const { return Acc(0); }
  __device__ Acc add(Acc total, T x, int64_t /*position*/) const {
    return total + static_cast<Acc>(to_compute(x));
  }
  __device__ Acc combine(Acc a, Acc b) const { return a + b; }
  // The mean of nothing is 0 / 0 = NaN, as in PyTorch.
  __device__ void write(const int64_t (&at)[kOperands], Acc total) const {
    out[at[1]] = from_compute<T>(average ? total / static_cast<Acc>(group_size) : total);
  }
};

// A member's value and position; position -1 stands for none yet.
template <typename C>
struct Candidate {
  C value;
  int64_t position;
};

// The larger value, NaN above everything, and the earlier position among equals: a total order,
// so the first maximum wins whatever order members are combined in.
template <typename C>
__device__ __forceinline__ Candidate<C> better(const Candidate<C>& a, const Candidate<C>& b) {
  if (b.position < 0) return a;
  if (a.position < 0) return b;
  const bool a_nan = is_nan(a.value);
  const bool b_nan = is_nan(b.value);
  if (a_nan || b_nan) {
    if (a_nan && b_nan) return a.position < b.position ? a : b;
    return a_nan ? a : b;
  }
  if (a.value != b.value) return a.value > b.value ? a : b;
  return a.position < b.position ? a : b;
}

// amax, max.dim and argmax; either output may be absent.
template <typename T>
struct MaxPolicy {
  static constexpr int kOperands = 3;
  using Acc = Candidate<compute_t<T>>;
  T* values;
  int64_t* indices;

  __device__ Acc identity() const { return {compute_t<T>(0), -1}; }
  __device__ Acc add(const Acc& best, T x, int64_t position) const {
    return better(best, Acc{to_compute(x), position});
  }
  __device__ Acc combine(const Acc& a, const Acc& b) const { return better(a, b); }
  __device__ void write(const int64_t (&at)[kOperands], const Acc& best) const {
    if (values) values[at[1]] = from_compute<T>(best.value);
    if (indices) indices[at[2]] = best.position;
  }
};

// Where a split's partial result goes; the split that finishes last (counted per group) combines
// all partials of its group in split order and writes the result.
template <typename Policy, typename Acc>
__device__ void finish_split(const Policy& policy, const int64_t (&at)[Policy::kOperands],
                             Acc partial, int64_t group, int64_t split, int64_t splits,
                             Acc* partials, uint32_t* counters) {
  partials[group * splits + split] = partial;
  __threadfence();
  if (atomicAdd(&counters[group], 1u) != static_cast<uint32_t>(splits - 1)) return;
  __threadfence();
  Acc total = load_volatile(&partials[group * splits]);
  for (int64_t s = 1; s < splits; ++s)
    total = policy.combine(total, load_volatile(&partials[group * splits + s]));
  policy.write(at, total);
  counters[group] = 0;  // ready for the next launch
}

template <typename T, typename Policy>
__global__ void __launch_bounds__(kMaxTeamThreads)
    reduce_rows(GroupShape<Policy::kOperands> shape, const T* __restrict__ input, Policy policy,
                typename Policy::Acc* partials, uint32_t* counters) {
  using Acc = typename Policy::Acc;
  __shared__ Acc warp_partials[kMaxTeamThreads / kWarpSize];
  const int lane = static_cast<int>(threadIdx.x);
  const int team = static_cast<int>(blockDim.x);
  const MemberRange range = split_range(shape.group_size, blockIdx.y, gridDim.y);
  for_each_slot_group(
      shape, [&](int64_t group, bool active, const int64_t(&at)[Policy::kOperands]) {
        Acc acc = policy.identity();
        if (active) {
          for_members(input + at[0], shape, range.begin, range.end, lane, team,
                      [&](T x, int64_t p) { acc = policy.add(acc, x, p); });
        }
        acc = team_reduce(
            acc, [&](const Acc& a, const Acc& b) { return policy.combine(a, b); }, warp_partials);
        if (!active || lane != 0) return;
        if (gridDim.y == 1) {
          policy.write(at, acc);
        } else {
          finish_split(policy, at, acc, group, blockIdx.y, gridDim.y, partials, counters);
        }
      });
}

// How a reduction launches: the column layout where prefers_columns, else rows
// (reduction_row_layout). grid.y blocks (the splits) share each group when there are too few
// groups to fill the device.
struct ReductionLayout {
  bool columns;
  dim3 grid, block;
};

template <int N>
ReductionLayout reduction_layout(const GroupShape<N>& shape, int64_t members_per_thread,
                                 size_t element_size, const LaunchTarget& target) {
  if (prefers_columns(shape)) {
    return {true,
            dim3(grid_blocks(shape.groups, kColumnGroups, target),
                 column_splits(shape.groups, shape.group_size, target)),
            dim3(kColumnGroups, kColumnSlices)};
  }
  const RowLayout rows = reduction_row_layout(shape.groups, shape.group_size, element_size,
                                              shape.dense_members[0], members_per_thread, target);
  return {false, dim3(rows.blocks, rows.splits), dim3(rows.team, rows.slots)};
}

template <typename T, typename Policy>
__global__ void __launch_bounds__(kColumnGroups * kColumnSlices)
    reduce_columns(GroupShape<Policy::kOperands> shape, const T* __restrict__ input, Policy policy,
                   typename Policy::Acc* partials, uint32_t* counters) {
  using Acc = typename Policy::Acc;
  __shared__ Acc slices[kColumnSlices][kColumnGroups];
  const MemberRange range = split_range(shape.group_size, blockIdx.y, gridDim.y);
  for (int64_t first = int64_t{blockIdx.x} * kColumnGroups; first < shape.groups;
       first += int64_t{gridDim.x} * kColumnGroups) {
    const int64_t group = first + threadIdx.x;
    const bool active = group < shape.groups;
    int64_t at[Policy::kOperands] = {};
    Acc acc = policy.identity();
    if (active) {
      shape.kept.offsets(group, at);
      for (int64_t p = range.begin + threadIdx.y; p < range.end; p += kColumnSlices) {
        acc = policy.add(acc, input[at[0] + member_offset(shape, 0, p)], p);
      }
    }
    slices[threadIdx.y][threadIdx.x] = acc;
    __syncthreads();
    if (active && threadIdx.y == 0) {
      for (int s = 1; s < kColumnSlices; ++s) acc = policy.combine(acc, slices[s][threadIdx.x]);
      if (gridDim.y == 1) {
        policy.write(at, acc);
      } else {
        finish_split(policy, at, acc, group, blockIdx.y, gridDim.y, partials, counters);
      }
    }
    __syncthreads();  // before the slices are written again
  }
}

}  // namespace
}  // namespace bp::cuda
