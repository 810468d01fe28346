// What group kernels (reductions, softmax, layer norm) share: walking a group's members, and how
// a launch is laid out.
//
// Row layout: a team of blockDim.x threads (a power of two) per group, blockDim.y groups per
// block. It suits groups whose members are consecutive in memory (vector loads along the row)
// or large. Column layout: 32 consecutive groups per block along x, kColumnSlices threads per
// group along y. It suits groups whose members are far apart while neighbouring groups are
// neighbours in memory (a reduction over dim 0 of a row-major matrix): loads stay coalesced.
// Both layouts may split each group's members over gridDim.y blocks when there are few, large
// groups; each split writes a partial result and the last split to finish combines them, in
// split order, so the result does not depend on timing.
#pragma once

#include "kernels/device_support.cuh"

namespace bp::cuda {

// Vectors each thread of a team loads before using them.
inline constexpr int kMemberUnroll = 4;

// Tags a count of members handled together: a vector's V, or 1.
template <int W>
using Width = std::integral_constant<int, W>;

// How a team walks members [begin, end) of a group: single members up to the first one on a
// 16-byte boundary in operand 0, vectors of V from there ([body, tail)), single members after.
// Vectors only where the members are dense in each operand of `operands` (a mask of operands the
// kernel reads or writes member by member), so that a vector never needs a member's offset;
// members not aligned even for one element (a foreign tensor's bytes) are all single too. Every
// pass over a group walks the same spans, so that a thread meets the same members each time.
template <int V>
struct MemberSpans {
  int64_t begin, body, tail, end;
};

template <typename T, int N>
__device__ __forceinline__ MemberSpans<kVectorWidth<T>> member_spans(const T* first,
                                                                     const GroupShape<N>& shape,
                                                                     int64_t begin, int64_t end,
                                                                     unsigned operands = 1) {
  constexpr int V = kVectorWidth<T>;
  for (int k = 0; k < N; ++k) {
    if ((operands >> k & 1) && !shape.dense_members[k]) return {begin, end, end, end};
  }
  int64_t head = elements_to_vector_alignment<V>(first + begin);
  if (head > end - begin) head = end - begin;
  if (!is_vector_aligned<V>(first + begin + head)) head = end - begin;
  const int64_t body = begin + head;
  return {begin, body, body + (end - body) / V * V, end};
}

// Calls use(load(Width<V>{}, p), p) for the vectors at p that lane `lane` of a team of `team`
// handles (every team-th), kMemberUnroll loads issued before their uses so that they are in
// flight together, and use(load(Width<1>{}, p), p) for its single members.
template <int V, typename Load, typename Use>
__device__ __forceinline__ void for_spans(const MemberSpans<V>& spans, int lane, int team,
                                          Load&& load, Use&& use) {
  for (int64_t p = spans.begin + lane; p < spans.body; p += team) use(load(Width<1>{}, p), p);
  const int64_t vectors = (spans.tail - spans.body) / V;
  for (int64_t v0 = lane; v0 < vectors; v0 += int64_t{team} * kMemberUnroll) {
    decltype(load(Width<V>{}, spans.body)) loaded[kMemberUnroll];
#pragma unroll
    for (int u = 0; u < kMemberUnroll; ++u) {
      const int64_t v = v0 + int64_t{u} * team;
      if (v < vectors) loaded[u] = load(Width<V>{}, spans.body + v * V);
    }
#pragma unroll
    for (int u = 0; u < kMemberUnroll; ++u) {
      const int64_t v = v0 + int64_t{u} * team;
      if (v < vectors) use(loaded[u], spans.body + v * V);
    }
  }
  for (int64_t p = spans.tail + lane; p < spans.end; p += team) use(load(Width<1>{}, p), p);
}

// The offset of member p in operand k.
template <int N>
__device__ __forceinline__ int64_t member_offset(const GroupShape<N>& shape, int k, int64_t p) {
  if (shape.dense_members[k]) return p;
  int64_t at[N];
  shape.members.offsets(p, at);
  return at[k];
}

// One operand's members of a group (or a row in shared memory), read and written W at a time at
// the positions of a MemberSpans: with 16-byte accesses where the members are dense and the
// spans' vectors start on a 16-byte boundary here too, else member by member.
template <typename T, int N>
struct GroupOperand {
  T* first;
  const GroupShape<N>* shape;
  int operand;
  bool dense;
  bool vectors;

  // Where the e-th of W members from p lies: vectors are only walked where members are dense.
  template <int W>
  __device__ __forceinline__ int64_t offset(int64_t p, int e) const {
    if constexpr (W == 1) {
      return dense ? p : member_offset(*shape, operand, p);
    } else {
      return p + e;
    }
  }

  template <int W>
  __device__ __forceinline__ Vec<std::remove_const_t<T>, W> load(Width<W>, int64_t p) const {
    using E = std::remove_const_t<T>;
    constexpr int kChunk = kVectorWidth<E>;
    Vec<E, W> values;
    if constexpr (W % kChunk == 0) {
      if (vectors) {
#pragma unroll
        for (int c = 0; c < W / kChunk; ++c) {
          const auto chunk = *reinterpret_cast<const Vec<E, kChunk>*>(first + p + c * kChunk);
#pragma unroll
          for (int e = 0; e < kChunk; ++e) values.v[c * kChunk + e] = chunk.v[e];
        }
        return values;
      }
    }
#pragma unroll
    for (int e = 0; e < W; ++e) values.v[e] = first[offset<W>(p, e)];
    return values;
  }

  template <int W>
  __device__ __forceinline__ void store(int64_t p, const Vec<T, W>& values) const {
    constexpr int kChunk = kVectorWidth<T>;
    if constexpr (W % kChunk == 0) {
      if (vectors) {
#pragma unroll
        for (int c = 0; c < W / kChunk; ++c) {
          Vec<T, kChunk> chunk;
#pragma unroll
          for (int e = 0; e < kChunk; ++e) chunk.v[e] = values.v[c * kChunk + e];
          *reinterpret_cast<Vec<T, kChunk>*>(first + p + c * kChunk) = chunk;
        }
        return;
      }
    }
#pragma unroll
    for (int e = 0; e < W; ++e) first[offset<W>(p, e)] = values.v[e];
  }
};

// Operand k of a group whose first member is at `first`, for walking `spans`.
template <typename T, int N, int V>
__device__ __forceinline__ GroupOperand<T, N> group_operand(T* first, const GroupShape<N>& shape,
                                                            int k, const MemberSpans<V>& spans) {
  constexpr int kChunk = kVectorWidth<std::remove_const_t<T>>;
  const bool dense = shape.dense_members[k];
  return {first, &shape, k, dense, dense && is_vector_aligned<kChunk>(first + spans.body)};
}

// A group's members kept in shared memory by a kernel laid out by cached_row_layout, member p at
// row[p], for walking `spans`.
template <typename C, int N, int V>
__device__ __forceinline__ GroupOperand<C, N> cached_group(C* row, const GroupShape<N>& shape,
                                                           const MemberSpans<V>& spans) {
  return {row, &shape, 0, true, is_vector_aligned<kVectorWidth<C>>(row + spans.body)};
}

// Members W at a time in the compute type.
template <typename T, int W>
__device__ __forceinline__ Vec<compute_t<T>, W> to_compute(const Vec<T, W>& values) {
  Vec<compute_t<T>, W> result;
#pragma unroll
  for (int e = 0; e < W; ++e) result.v[e] = to_compute(values.v[e]);
  return result;
}

template <typename T, typename C, int W>
__device__ __forceinline__ Vec<T, W> from_compute(const Vec<C, W>& values) {
  Vec<T, W> result;
#pragma unroll
  for (int e = 0; e < W; ++e) result.v[e] = from_compute<T>(values.v[e]);
  return result;
}

// Applies f to each member of `values`.
template <typename C, int W, typename F>
__device__ __forceinline__ Vec<C, W> each(Vec<C, W> values, F&& f) {
#pragma unroll
  for (int e = 0; e < W; ++e) values.v[e] = f(values.v[e]);
  return values;
}

// Applies f to the members of `values` and `others` pairwise.
template <typename C, int W, typename F>
__device__ __forceinline__ Vec<C, W> each(Vec<C, W> values, const Vec<C, W>& others, F&& f) {
#pragma unroll
  for (int e = 0; e < W; ++e) values.v[e] = f(values.v[e], others.v[e]);
  return values;
}

template <typename T, int W>
__device__ __forceinline__ constexpr Width<W> width_of(const Vec<T, W>&) {
  return {};
}

// Calls visit(element, p) for the members p of [begin, end) that lane `lane` of a team of `team`
// handles (every team-th, in its own order), of the group whose first member (in operand 0,
// whose elements are T) is at `first`. Dense members are read with 16-byte vectors from the
// first aligned one on. Its own walk rather than for_spans over a GroupOperand: the operand's
// run-time choice between vectors and members costs the reductions much of their bandwidth.
template <typename T, int N, typename Visit>
__device__ __forceinline__ void for_members(const T* __restrict__ first, const GroupShape<N>& shape,
                                            int64_t begin, int64_t end, int lane, int team,
                                            Visit&& visit) {
  if (!shape.dense_members[0]) {
    for (int64_t p = begin + lane; p < end; p += team) {
      int64_t at[N];
      shape.members.offsets(p, at);
      visit(first[at[0]], p);
    }
    return;
  }
  constexpr int V = kVectorWidth<T>;
  int64_t head = elements_to_vector_alignment<V>(first + begin);
  if (head > end - begin) head = end - begin;
  // Members not aligned even for one T (a foreign tensor's bytes): no vectors at all.
  if (!is_vector_aligned<V>(first + begin + head)) head = end - begin;
  for (int64_t p = begin + lane; p < begin + head; p += team) visit(first[p], p);
  const int64_t body = begin + head;
  const int64_t vectors = (end - body) / V;
  const auto* row = reinterpret_cast<const Vec<T, V>*>(first + body);
  for (int64_t v0 = lane; v0 < vectors; v0 += int64_t{team} * kMemberUnroll) {
    Vec<T, V> loaded[kMemberUnroll];
#pragma unroll
    for (int u = 0; u < kMemberUnroll; ++u) {
      const int64_t v = v0 + int64_t{u} * team;
      if (v < vectors) loaded[u] = row[v];
    }
#pragma unroll
    for (int u = 0; u < kMemberUnroll; ++u) {
      const int64_t v = v0 + int64_t{u} * team;
      if (v < vectors) {
#pragma unroll
        for (int e = 0; e < V; ++e) visit(loaded[u].v[e], body + v * V + e);
      }
    }
  }
  for (int64_t p = body + vectors * V + lane; p < end; p += team) visit(first[p], p);
}

// Calls visit(group, active, at) for each group the slots of a row-layout block take in turn:
// slot threadIdx.y of blockDim.y, the blocks along x striding over the groups together. `at`
// holds the group's first element in each operand (zeros where the slot is past the last
// group, inactive). Every thread of the block makes the same calls, active or not, so that
// visit may synchronise the block.
template <int N, typename Visit>
__device__ __forceinline__ void for_each_slot_group(const GroupShape<N>& shape, Visit&& visit) {
  for (int64_t first = int64_t{blockIdx.x} * blockDim.y; first < shape.groups;
       first += int64_t{gridDim.x} * blockDim.y) {
    const int64_t group = first + threadIdx.y;
    const bool active = group < shape.groups;
    int64_t at[N] = {};
    if (active) shape.kept.offsets(group, at);
    visit(group, active, at);
  }
}

// Dynamic shared memory, as bytes; each kernel views it as the type it caches. The host tests'
// emulation (tests/cuda/emulated_launch.h) declares its own.
#if !defined(BP_CUDA_EMULATED_LAUNCH)
extern __shared__ __align__(16) unsigned char dynamic_shared[];
#endif

// The slot's share of the block's dynamic shared memory, in which a kernel laid out by
// cached_row_layout keeps its group's members, T each.
template <typename T, int N>
__device__ __forceinline__ T* slot_row_cache(const GroupShape<N>& shape) {
  return reinterpret_cast<T*>(dynamic_shared) + threadIdx.y * shape.group_size;
}

// Reads a value another block wrote (and fenced) during this launch, bypassing any stale copy
// in this multiprocessor's L1 cache.
template <typename T>
__device__ __forceinline__ T load_volatile(const T* p) {
  static_assert(sizeof(T) % 4 == 0 && std::is_trivially_copyable_v<T>);
  uint32_t words[sizeof(T) / 4];
  const volatile uint32_t* source = reinterpret_cast<const volatile uint32_t*>(p);
#pragma unroll
  for (size_t i = 0; i < sizeof(T) / 4; ++i) words[i] = source[i];
  T value;
  memcpy(&value, words, sizeof(T));
  return value;
}

// The members [begin, end) of a group that split `split` of `splits` covers.
struct MemberRange {
  int64_t begin;
  int64_t end;
};

__device__ __forceinline__ MemberRange split_range(int64_t group_size, int64_t split,
                                                   int64_t splits) {
  const int64_t chunk = (group_size + splits - 1) / splits;
  const int64_t begin = split * chunk < group_size ? split * chunk : group_size;
  const int64_t end = begin + chunk < group_size ? begin + chunk : group_size;
  return {begin, end};
}

// cached_row_layout for `kernel` on the current device: reads its static shared memory and
// raises its dynamic limit to what the layout uses.
CachedRowLayout prepare_cached_rows(const void* kernel, std::string_view name, int64_t groups,
                                    int64_t group_size, size_t element_size,
                                    int64_t members_per_thread, const LaunchTarget& target);

// Whether the column layout reads operand 0 coalesced where the row layout would not.
template <int N>
bool prefers_columns(const GroupShape<N>& shape) {
  return !shape.dense_members[0] && shape.kept.ndim >= 1 && shape.kept.strides[0][0] == 1;
}

}  // namespace bp::cuda
