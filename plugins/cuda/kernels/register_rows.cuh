// Rows kept in registers: the fast path of softmax, log_softmax, layer norm and RMS norm for rows
// of whole 16-byte vectors that start on a 16-byte boundary in every operand walked member by
// member (rows_in_registers). A team (register_row_variant) reads its row once, each thread
// holding `kVectors` vectors of it in registers indexed only by constants, reduces across the
// team with warp shuffles and, for teams of several warps, one exchange through shared memory,
// and writes the row from the registers. While a row is reduced, the thread's loads of its next
// row (grid-stride) are already in flight. Other rows take the kernels of softmax.cuh and
// norm.cuh.
//
// Included by softmax.cuh and norm.cuh; a header so that the host tests compile these kernels
// too (tests/cuda/emulated_launch.h).
#pragma once

#include "kernels/groups.cuh"

#include <cmath>
#include <cstring>

namespace bp::cuda {
// Internal to each includer: the kernel library and the host tests each compile their own.
namespace {

// Whether every operand in the mask `operands` (those a kernel reads or writes member by member)
// has dense members, starts each row on a 16-byte boundary (`firsts[k]` is its first element),
// and whether the rows have a register variant: the conditions of the register-row kernels.
template <typename T, int N>
bool rows_in_registers(const GroupShape<N>& shape, const void* const (&firsts)[N],
                       unsigned operands) {
  constexpr int V = kVectorWidth<T>;
  if (register_row_variant(shape.group_size, V).team == 0) return false;
  for (int k = 0; k < N; ++k) {
    if (!(operands >> k & 1)) continue;
    if (!shape.dense_members[k]) return false;
    if (reinterpret_cast<uintptr_t>(firsts[k]) % kVectorBytes != 0) return false;
    for (int d = 0; d < shape.kept.ndim; ++d) {
      if (shape.kept.strides[k][d] * static_cast<int64_t>(sizeof(T)) % kVectorBytes != 0)
        return false;
    }
  }
  return true;
}

// Calls fn(std::integral_constant<int, team>) for the compile-time team of `variant` (one
// register_row_variant gives).
template <typename Fn>
void visit_register_row_team(const RegisterRowVariant& variant, Fn&& fn) {
  using std::integral_constant;
  switch (variant.team) {
    case kWarpSize: return fn(integral_constant<int, kWarpSize>{});
    case 64: return fn(integral_constant<int, 64>{});
    case 128: return fn(integral_constant<int, 128>{});
    case 256: return fn(integral_constant<int, 256>{});
    default: return fn(integral_constant<int, kMaxTeamThreads>{});
  }
}

// Calls launch(team, vectors, grid, block) with the compile-time variant for rows of
// `shape` (members of T) and its launch shape, for one of the register-row kernels.
template <typename T, int N, typename Launch>
void launch_register_rows(const GroupShape<N>& shape, const LaunchTarget& target, Launch&& launch) {
  const RegisterRowVariant variant = register_row_variant(shape.group_size, kVectorWidth<T>);
  const dim3 grid(register_row_blocks(shape.groups, variant, target));
  const dim3 block(register_row_block_threads(variant));
  visit_register_row_team(
      variant, [&](auto team) { launch(team, Width<kRegisterRowVectors>{}, grid, block); });
}

// Threads of a block of teams of kTeam (register_row_block_threads): several teams of a warp,
// or one wider team, whose reductions synchronise the block.
template <int kTeam>
inline constexpr int kRegisterRowBlock = kTeam == kWarpSize ? kRegisterRowWarpBlock : kTeam;

// One 16-byte vector at p, moved as one access whatever T is.
template <typename T>
__device__ __forceinline__ Vec<T, kVectorWidth<T>> load_vector(const T* p) {
  const uint4 bits = *reinterpret_cast<const uint4*>(p);
  Vec<T, kVectorWidth<T>> values;
  memcpy(&values, &bits, sizeof(bits));
  return values;
}

// `values` rounded to T and stored as one 16-byte access at p: the 16-bit floats two at a time,
// as one conversion each pair, rounding to nearest even as from_compute does.
template <typename T, int V>
__device__ __forceinline__ void store_vector(T* p, const Vec<compute_t<T>, V>& values) {
  static_assert(V * sizeof(T) == sizeof(uint4));
  uint4 bits;
  if constexpr (std::is_same_v<T, __nv_bfloat16> || std::is_same_v<T, __half>) {
    uint32_t words[V / 2];
#pragma unroll
    for (int e = 0; e < V / 2; ++e) {
      if constexpr (std::is_same_v<T, __nv_bfloat16>) {
        const __nv_bfloat162 pair = __floats2bfloat162_rn(values.v[2 * e], values.v[2 * e + 1]);
        memcpy(&words[e], &pair, sizeof(pair));
      } else {
        const __half2 pair = __floats2half2_rn(values.v[2 * e], values.v[2 * e + 1]);
        memcpy(&words[e], &pair, sizeof(pair));
      }
    }
    memcpy(&bits, words, sizeof(bits));
  } else {
    const Vec<T, V> stored = from_compute<T>(values);
    memcpy(&bits, &stored, sizeof(bits));
  }
  *reinterpret_cast<uint4*>(p) = bits;
}

// The larger of two numbers, the other where one is NaN (one instruction): enough for a row's
// maximum where any NaN member makes the whole row NaN through the sum anyway.
__device__ __forceinline__ float number_max(float a, float b) { return fmaxf(a, b); }
__device__ __forceinline__ double number_max(double a, double b) { return fmax(a, b); }

// A row held by a team: thread `lane` holds vectors lane, lane + kTeam, ... of it, those below
// `vectors` (`holds(i)`), in the compute type.
template <typename C, int V, int kTeam, int kVectors>
struct HeldRow {
  Vec<C, V> x[kVectors];
  int lane;
  int vectors;

  __device__ __forceinline__ bool holds(int i) const { return lane + i * kTeam < vectors; }
  // The member offset of the first member of vector i.
  __device__ __forceinline__ int64_t at(int i) const { return int64_t{lane + i * kTeam} * V; }

  // The reduction by `combine` (associative and commutative up to rounding) of fn(member) over
  // the members held, each thread combining its own in a fixed order.
  template <typename Fn, typename Combine>
  __device__ __forceinline__ C fold(C identity, Combine combine, Fn&& fn) const {
    C total = identity;
#pragma unroll
    for (int i = 0; i < kVectors; ++i) {
      if (!holds(i)) continue;
#pragma unroll
      for (int e = 0; e < V; ++e) total = combine(total, fn(x[i].v[e]));
    }
    return total;
  }
};

// A value reduced over a team of kTeam threads: shuffles within each warp, then, for teams of
// several warps, each warp's result through shared memory, read by every thread in warp order.
// Every thread gets the same result. The two halves of `exchange` take turns, so that a
// reduction never overwrites partials another thread may still read from the one before: a
// thread writes a half again only after the barrier of the other half, which every thread
// reaches after reading this one. Every thread of the block must call it as often.
template <int kTeam, typename C>
struct TeamReducer {
  static constexpr int kWarps = kTeam / kWarpSize > 0 ? kTeam / kWarpSize : 1;
  C (*exchange)[kWarps];
  int turn = 0;

  template <typename Combine>
  __device__ __forceinline__ C operator()(C value, Combine combine) {
#pragma unroll
    for (int mask = kWarpSize / 2; mask > 0; mask /= 2)
      value = combine(value, shuffle_xor(value, mask, kWarpSize));
    if constexpr (kTeam <= kWarpSize) {
      // Lanes may hold values that compare equal but differ in their bits (0 and -0).
      return shuffle_from_first(value, kWarpSize);
    } else {
      C* partials = exchange[turn];
      turn ^= 1;
      const int thread = static_cast<int>(threadIdx.x);
      if (thread % kWarpSize == 0) partials[thread / kWarpSize] = value;
      __syncthreads();
      C result = partials[0];
#pragma unroll
      for (int w = 1; w < kWarps; ++w) result = combine(result, partials[w]);
      return result;
    }
  }
};

// Calls visit(at, row) for each row the calling team takes: team threadIdx.x / kTeam of the
// block, the blocks striding over the rows together; `at` holds the row's first element in each
// operand, and `row` its members from operand 0 (input) held in registers. Before the visit,
// the thread's loads of its next row are issued. A team past the last row returns at once: a
// whole warp for teams of a warp, a whole block otherwise, so that visits may synchronise the
// block where a team is a block.
template <int kTeam, int kVectors, typename T, int N, typename Visit>
__device__ __forceinline__ void for_each_register_row(const GroupShape<N>& shape,
                                                      const T* __restrict__ input, Visit&& visit) {
  using C = compute_t<T>;
  constexpr int V = kVectorWidth<T>;
  constexpr int kSlots = kRegisterRowBlock<kTeam> / kTeam;
  const int lane = static_cast<int>(threadIdx.x) % kTeam;
  const int vectors = static_cast<int>(shape.group_size / V);
  const int64_t stride = int64_t{gridDim.x} * kSlots;
  int64_t row = int64_t{blockIdx.x} * kSlots + static_cast<int>(threadIdx.x) / kTeam;
  if (row >= shape.groups) return;
  int64_t at[N];
  shape.kept.offsets(row, at);
  Vec<T, V> loaded[kVectors];
  const auto load = [&](const T* first) {
#pragma unroll
    for (int i = 0; i < kVectors; ++i) {
      const int v = lane + i * kTeam;
      if (v < vectors) loaded[i] = load_vector(first + int64_t{v} * V);
    }
  };
  load(input + at[0]);
  while (true) {
    HeldRow<C, V, kTeam, kVectors> held;
    held.lane = lane;
    held.vectors = vectors;
#pragma unroll
    for (int i = 0; i < kVectors; ++i) {
      if (held.holds(i)) held.x[i] = to_compute(loaded[i]);
    }
    const int64_t next = row + stride;
    int64_t next_at[N] = {};
    if (next < shape.groups) {
      shape.kept.offsets(next, next_at);
      load(input + next_at[0]);
    }
    visit(at, held);
    if (next >= shape.groups) return;
    row = next;
#pragma unroll
    for (int k = 0; k < N; ++k) at[k] = next_at[k];
  }
}

}  // namespace
}  // namespace bp::cuda
