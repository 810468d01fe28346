// sum and mean over the groups of a ReductionLoops: floating dtypes accumulate in double, the
// others in int64. A contiguous group is summed in blocks of interleaved partial sums, the
// block totals added in order (the blocks of a few long groups in parallel); groups lying side
// by side add whole rows of the input into a row of running totals. Every group's sum is the
// same bits whatever the thread count.
#pragma once

#include "kernels/multiversion.h"
#include "kernels/partial_sums.h"
#include "kernels/prefetch.h"
#include "kernels/reduction_loops.h"
#include "kernels/row_conversion.h"
#include "kernels/strided_loop.h"
#include "runtime/thread_pool.h"

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace bp::cpu {

// sum and mean accumulate floating dtypes in double and the others in int64 (then wrap to
// out's dtype, as PyTorch does).
template <typename T>
using SumAccumulator = std::conditional_t<std::is_floating_point_v<compute_t<T>>, double, int64_t>;

namespace sum_detail {

// A contiguous run is summed in blocks of this many elements, each in PartialSums, and the
// block totals are added in order. The blocks of a few long runs are summed in parallel.
inline constexpr int64_t kSumBlock = 32 * 1024;
// Fewer groups than this, each of several blocks, are summed block by block in parallel.
inline constexpr int64_t kFewGroups = 16;

template <typename T>
BP_CPU_MULTIVERSIONED SumAccumulator<T> sum_block(const T* x, int64_t count) {
  PartialSums<SumAccumulator<T>> sums;
  // Blocks are whole multiples of the lanes, so each element keeps its lane.
  static_assert(kReadAheadBlock / sizeof(T) % PartialSums<SumAccumulator<T>>::kLanes == 0);
  for_each_block_reading_ahead(
      count, [&](int64_t begin, int64_t end) { sums.add(x + begin, end - begin); }, x);
  return sums.total();
}

template <typename T>
SumAccumulator<T> sum_contiguous(const T* x, int64_t count) {
  SumAccumulator<T> total = 0;
  for (int64_t begin = 0; begin < count; begin += kSumBlock)
    total += sum_block(x + begin, std::min(kSumBlock, count - begin));
  return total;
}

// The sum of a group whose elements are not contiguous.
template <typename T>
BP_CPU_MULTIVERSIONED SumAccumulator<T> sum_strided_group(const ReductionLoops<2>& loops,
                                                          const Offsets<2>& group, const T* input) {
  PartialSums<SumAccumulator<T>> sums;
  loops.for_each_row_in_group(group,
                              [&](const Offsets<2>& start, const Offsets<2>& step, int64_t length) {
                                if (step[0] == 1) {
                                  sums.add(input + start[0], length);
                                } else {
                                  sums.add_strided(input + start[0], length, step[0]);
                                }
                              });
  return sums.total();
}

// Sums `count` groups whose elements lie side by side (group j's at `first` + j * `step`): each
// reduced position adds a row of the input to a row of running totals, so that every load
// and add is a vector one, and each group's elements are added in order.
template <typename T, typename Store>
BP_CPU_MULTIVERSIONED void sum_side_by_side(const ReductionLoops<2>& loops, const Offsets<2>& first,
                                            const Offsets<2>& step, int64_t count, const T* input,
                                            Store&& store) {
  using Acc = SumAccumulator<T>;
  const auto value = [](T x) { return static_cast<Acc>(static_cast<compute_t<T>>(x)); };
  const int64_t lane_step = step[0];
  Acc totals[kSideBySideTile];
  compute_t<T> converted[kConvertsFasterInBlocks<T> ? kSideBySideTile : 1];
  for (int64_t tile = 0; tile < count; tile += kSideBySideTile) {
    const int64_t width = std::min(kSideBySideTile, count - tile);
    std::fill_n(totals, width, Acc{0});
    Offsets<2> tile_first = first;
    advance(tile_first, step, tile);
    loops.for_each_row_in_group(tile_first, [&](const Offsets<2>& start, const Offsets<2>& row_step,
                                                int64_t length) {
      const T* row = input + start[0];
      int64_t i = 0;
      if constexpr (kConvertsFasterInBlocks<T>) {
        // A row at a time, converted first.
        for (; i < length; ++i) {
          const compute_t<T>* x =
              row_in_compute_type(row + i * row_step[0], width, lane_step, converted);
          for (int64_t j = 0; j < width; ++j) totals[j] += static_cast<Acc>(x[j]);
        }
      } else if (lane_step == 1) {
        // Four input rows per pass over the totals; each total still adds them in order.
        for (; i + 4 <= length; i += 4) {
          const T* r0 = row + i * row_step[0];
          const T* r1 = r0 + row_step[0];
          const T* r2 = r1 + row_step[0];
          const T* r3 = r2 + row_step[0];
          for (int64_t j = 0; j < width; ++j)
            totals[j] = (((totals[j] + value(r0[j])) + value(r1[j])) + value(r2[j])) + value(r3[j]);
        }
      }
      for (; i < length; ++i) {
        const T* r = row + i * row_step[0];
        for (int64_t j = 0; j < width; ++j) totals[j] += value(r[j * lane_step]);
      }
    });
    for (int64_t j = 0; j < width; ++j) store(tile_first[1] + j * step[1], totals[j]);
  }
}

}  // namespace sum_detail

// sum and mean of the groups of `loops` into output. Out is T, or a dtype T widens exactly to,
// whose accumulator is T's too (int64 for the integers and Bool, double for the floats): the
// sums are those of the input converted to Out first.
template <typename T, typename Out>
void sum_groups(const ReductionLoops<2>& loops, const T* input, Out* output, bool average) {
  using Acc = SumAccumulator<T>;
  static_assert(std::is_same_v<Acc, SumAccumulator<Out>>);
  // mean of nothing is 0/0 = NaN, as in PyTorch.
  const double count = static_cast<double>(loops.group_size());
  const auto store = [&](int64_t offset, Acc total) {
    if constexpr (std::is_floating_point_v<Acc>) {
      output[offset] = static_cast<Out>(average ? total / count : total);
    } else {
      output[offset] = static_cast<Out>(total);
    }
  };
  if (loops.groups_side_by_side()) {
    loops.for_each_group_run<NoScratch>(
        [&](const Offsets<2>& first, const Offsets<2>& step, int64_t runs, NoScratch&) {
          sum_detail::sum_side_by_side(loops, first, step, runs, input, store);
        });
    return;
  }
  if (!loops.groups_contiguous_in(0)) {
    loops.for_each_group([&](const Offsets<2>& group) {
      store(group[1], sum_detail::sum_strided_group(loops, group, input));
    });
    return;
  }
  const int64_t blocks_per_group =
      (loops.group_size() + sum_detail::kSumBlock - 1) / sum_detail::kSumBlock;
  if (blocks_per_group < 2 || loops.group_count() >= sum_detail::kFewGroups) {
    loops.for_each_group([&](const Offsets<2>& group) {
      store(group[1], sum_detail::sum_contiguous(input + group[0], loops.group_size()));
    });
    return;
  }
  // A few long groups: their blocks are summed in parallel, then added in order, which is
  // the same arithmetic as sum_contiguous.
  const std::vector<Offsets<2>> groups = loops.group_offsets();
  std::vector<Acc> block_totals(groups.size() * static_cast<size_t>(blocks_per_group));
  parallel_for(static_cast<int64_t>(block_totals.size()), 1, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) {
      const int64_t group = b / blocks_per_group;
      const int64_t first = (b % blocks_per_group) * sum_detail::kSumBlock;
      block_totals[static_cast<size_t>(b)] =
          sum_detail::sum_block(input + groups[static_cast<size_t>(group)][0] + first,
                                std::min(sum_detail::kSumBlock, loops.group_size() - first));
    }
  });
  for (size_t g = 0; g < groups.size(); ++g) {
    Acc total = 0;
    for (int64_t b = 0; b < blocks_per_group; ++b)
      total += block_totals[g * static_cast<size_t>(blocks_per_group) + static_cast<size_t>(b)];
    store(groups[g][1], total);
  }
}

}  // namespace bp::cpu
