// amax, max.dim and argmax over the groups of a ReductionLoops: each group's first maximum and
// its position, NaN counting as larger than everything, as in PyTorch. A contiguous row is
// compared in vector lanes that select rather than branch; groups lying side by side compare
// whole rows of the input with a row of running maxima.
#pragma once

#include "kernels/multiversion.h"
#include "kernels/nan_propagation.h"
#include "kernels/reduction_loops.h"
#include "kernels/row_conversion.h"
#include "kernels/strided_loop.h"
#include "kernels/vector_types.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>

namespace bp::cpu {
namespace max_detail {

// Whether `value` takes the place of `best`, the largest so far: NaN counts as larger than
// everything, and the first of equals (or of NaNs) is kept, as in PyTorch.
template <typename C>
bool beats(C value, C best) {
  return is_nan(value) ? !is_nan(best) : value > best;
}

// max_groups for `count` groups lying side by side (group j's elements at `first` + j *
// `step`), as sum_side_by_side sums them: each reduced position compares a row of the input with
// a row of running maxima, selecting rather than branching, so that the loop vectorises.
template <typename T, typename Store>
BP_CPU_MULTIVERSIONED void max_side_by_side(const ReductionLoops<3>& loops, const Offsets<3>& first,
                                            const Offsets<3>& step, int64_t count, const T* input,
                                            Store&& store) {
  using C = compute_t<T>;
  const int64_t lane_step = step[0];
  C best[kSideBySideTile];
  int64_t best_position[kSideBySideTile];
  C converted[kConvertsFasterInBlocks<T> ? kSideBySideTile : 1];
  for (int64_t tile = 0; tile < count; tile += kSideBySideTile) {
    const int64_t width = std::min(kSideBySideTile, count - tile);
    Offsets<3> tile_first = first;
    advance(tile_first, step, tile);
    int64_t position = 0;
    loops.for_each_row_in_group(
        tile_first, [&](const Offsets<3>& start, const Offsets<3>& row_step, int64_t length) {
          for (int64_t i = 0; i < length; ++i, ++position) {
            const T* row = input + start[0] + i * row_step[0];
            const C* converted_row = nullptr;
            if constexpr (kConvertsFasterInBlocks<T>) {
              converted_row = row_in_compute_type(row, width, lane_step, converted);
            }
            const auto value = [&](int64_t j) {
              if constexpr (kConvertsFasterInBlocks<T>) {
                return converted_row[j];
              } else {
                return static_cast<C>(row[j * lane_step]);
              }
            };
            if (position == 0) {
              for (int64_t j = 0; j < width; ++j) best[j] = value(j);
              std::fill_n(best_position, width, int64_t{0});
              continue;
            }
            for (int64_t j = 0; j < width; ++j) {
              const C x = value(j);
              const bool better = beats(x, best[j]);
              best[j] = better ? x : best[j];
              best_position[j] = better ? position : best_position[j];
            }
          }
        });
    for (int64_t j = 0; j < width; ++j) {
      store(tile_first[1] + j * step[1], tile_first[2] + j * step[2], best[j], best_position[j]);
    }
  }
}

// first_max_of_row compares in Lane (small integers widened to int32) and keeps, per lane, the
// block where its maximum was seen as a Position of the same width, so that a comparison's mask
// selects both; kMaxVectors vectors at a time, whose selects do not wait on each other.
template <typename C>
using MaxLane = std::conditional_t<(sizeof(C) >= 4), C, int32_t>;
template <typename C>
using MaxPosition = std::conditional_t<sizeof(MaxLane<C>) == 8, int64_t, int32_t>;
inline constexpr int kMaxVectors = 8;

// The first maximum of `length` consecutive elements and its position among them (length > 0).
// Each vector lane keeps the first maximum of its share of the positions, selected rather than
// branched to; then the lanes' winners meet, the earlier position winning among equals (and
// among NaNs).
template <typename T>
BP_CPU_MULTIVERSIONED std::pair<compute_t<T>, int64_t> first_max_of_row(const T* row,
                                                                        int64_t length) {
  using C = compute_t<T>;
  using Lane = MaxLane<C>;
  using Position = MaxPosition<C>;
  using Lanes = Vector<Lane, kSelectVectorBytes>;
  using Positions = Vector<Position, kSelectVectorBytes>;
  constexpr int64_t kLanes = kSelectVectorBytes / sizeof(Lane);
  constexpr int64_t kBlock = kLanes * kMaxVectors;
  // Blocks are counted in Position, which must not overflow.
  constexpr int64_t kMaxBlocks = std::numeric_limits<Position>::max();
  const auto load = [&](int64_t at) {
    Lanes v;
    for (int64_t e = 0; e < kLanes; ++e) v[e] = static_cast<Lane>(static_cast<C>(row[at + e]));
    return v;
  };
  int64_t position = 0;
  C best = static_cast<C>(row[0]);
  int64_t best_position = 0;
  if (length >= 2 * kBlock && length / kBlock <= kMaxBlocks) {
    Lanes lane_best[kMaxVectors];
    Positions lane_block[kMaxVectors];
    for (int u = 0; u < kMaxVectors; ++u) {
      lane_best[u] = load(u * kLanes);
      lane_block[u] = Positions{};
    }
    Positions block = Positions{} + 1;
    for (position = kBlock; position + kBlock <= length; position += kBlock, block += 1) {
      for (int u = 0; u < kMaxVectors; ++u) {
        const Lanes value = load(position + u * kLanes);
        const auto better =
            (value > lane_best[u]) | ((value != value) & (lane_best[u] == lane_best[u]));
        lane_best[u] = better ? value : lane_best[u];
        lane_block[u] = better ? block : lane_block[u];
      }
    }
    best_position = -1;
    for (int u = 0; u < kMaxVectors; ++u) {
      for (int64_t e = 0; e < kLanes; ++e) {
        const C value = static_cast<C>(lane_best[u][e]);
        const int64_t at = static_cast<int64_t>(lane_block[u][e]) * kBlock + u * kLanes + e;
        const bool tie = is_nan(value) ? is_nan(best) : value == best;
        if (best_position < 0 || beats(value, best) || (tie && at < best_position)) {
          best = value;
          best_position = at;
        }
      }
    }
  }
  // The rest come after every position seen, so only a larger value takes the place.
  for (; position < length; ++position) {
    const C value = static_cast<C>(row[position]);
    if (beats(value, best)) {
      best = value;
      best_position = position;
    }
  }
  return {best, best_position};
}

}  // namespace max_detail

// The largest element of each group and its position in the group, the first one (NaN counts as
// larger than everything, as in PyTorch), handed to store(value_at, index_at, best, position)
// with the offsets of the group in operands 1 (values) and 2 (indices). Groups are not empty.
template <typename T, typename Store>
void max_groups(const ReductionLoops<3>& loops, const T* input, Store&& store) {
  using C = compute_t<T>;
  if (loops.groups_side_by_side()) {
    loops.for_each_group_run<NoScratch>(
        [&](const Offsets<3>& first, const Offsets<3>& step, int64_t runs, NoScratch&) {
          max_detail::max_side_by_side(loops, first, step, runs, input, store);
        });
    return;
  }
  loops.for_each_group([&](const Offsets<3>& group) {
    C best{};
    int64_t best_position = -1;
    int64_t position = 0;
    // Rows come in order, each after every position before it.
    const auto take = [&](C value, int64_t at) {
      if (best_position < 0 || max_detail::beats(value, best)) {
        best = value;
        best_position = position + at;
      }
    };
    loops.for_each_row_in_group(
        group, [&](const Offsets<3>& start, const Offsets<3>& step, int64_t length) {
          const T* row = input + start[0];
          if (step[0] == 1) {
            const auto [row_best, row_position] = max_detail::first_max_of_row(row, length);
            take(row_best, row_position);
          } else {
            for (int64_t i = 0; i < length; ++i) take(static_cast<C>(row[i * step[0]]), i);
          }
          position += length;
        });
    store(group[1], group[2], best, best_position);
  });
}

}  // namespace bp::cpu
