// Reductions: sum, mean, amax, max.dim and argmax, over any dimensions and strides.
#include "CPUNativeFunctions.h"

#include "dtypes.h"
#include "multiversion.h"
#include "reduction.h"
#include "strided_loop.h"
#include "thread_pool.h"
#include "vector_math.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace bp::cpu {
namespace {

// sum and mean accumulate floating dtypes in double and the others in int64 (then wrap to
// out's dtype, as PyTorch does).
template <typename T>
using SumAccumulator = std::conditional_t<std::is_floating_point_v<compute_t<T>>, double, int64_t>;

// A contiguous run is summed in blocks of this many elements, each in PartialSums, and the
// block totals are added in order. The blocks of a few long runs are summed in parallel.
constexpr int64_t kSumBlock = 32 * 1024;
// Fewer groups than this, each of several blocks, are summed block by block in parallel.
constexpr int64_t kFewGroups = 16;

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
                                                          const Offsets<2>& group,
                                                          const T* input) {
  PartialSums<SumAccumulator<T>> sums;
  loops.for_each_row_in_group(
      group, [&](const Offsets<2>& start, const Offsets<2>& step, int64_t length) {
        if (step[0] == 1) {
          sums.add(input + start[0], length);
        } else {
          sums.add_strided(input + start[0], length, step[0]);
        }
      });
  return sums.total();
}

// How many groups lying side by side sum_side_by_side adds up at once. Their running totals (32
// KB of doubles) stay in the L1 and L2 caches while rows of the input stream past; the wider
// the tile, the longer each row's stretch of sequential reads, which the hardware prefetcher
// follows best (measured: 512 lanes reach 0.8x memcpy's bandwidth, 4096 lanes 1.4x).
constexpr int64_t kSideBySideTile = 4096;

// Sums `count` groups whose elements lie side by side (group j's at `first` + j * `step`): each
// reduced position adds a row of the input to a row of running totals, so that every load
// and add is a vector one, and each group's elements are added in order.
template <typename T, typename Store>
BP_CPU_MULTIVERSIONED void sum_side_by_side(const ReductionLoops<2>& loops,
                                            const Offsets<2>& first, const Offsets<2>& step,
                                            int64_t count, const T* input, Store&& store) {
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
    loops.for_each_row_in_group(
        tile_first, [&](const Offsets<2>& start, const Offsets<2>& row_step, int64_t length) {
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
                totals[j] = (((totals[j] + value(r0[j])) + value(r1[j])) + value(r2[j])) +
                            value(r3[j]);
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
          sum_side_by_side(loops, first, step, runs, input, store);
        });
    return;
  }
  if (!loops.groups_contiguous_in(0)) {
    loops.for_each_group([&](const Offsets<2>& group) {
      store(group[1], sum_strided_group(loops, group, input));
    });
    return;
  }
  const int64_t blocks_per_group = (loops.group_size() + kSumBlock - 1) / kSumBlock;
  if (blocks_per_group < 2 || loops.group_count() >= kFewGroups) {
    loops.for_each_group([&](const Offsets<2>& group) {
      store(group[1], sum_contiguous(input + group[0], loops.group_size()));
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
      const int64_t first = (b % blocks_per_group) * kSumBlock;
      block_totals[static_cast<size_t>(b)] =
          sum_block(input + groups[static_cast<size_t>(group)][0] + first,
                    std::min(kSumBlock, loops.group_size() - first));
    }
  });
  for (size_t g = 0; g < groups.size(); ++g) {
    Acc total = 0;
    for (int64_t b = 0; b < blocks_per_group; ++b)
      total += block_totals[g * static_cast<size_t>(blocks_per_group) + static_cast<size_t>(b)];
    store(groups[g][1], total);
  }
}

// sum and mean. The meta step has given self out's dtype, or one that widens exactly to it.
void sum_into(std::string_view op, const TensorView& self, const DimValues<bool>& reduced,
              bool keepdim, const TensorView& out, bool average) {
  require_widening_dtype(op, "self", self, out.dtype());
  if (average && !is_floating_point(out.dtype())) unsupported_dtype(op, out.dtype());
  const DimValues<int64_t> out_strides = reduced_output_strides(out, reduced, keepdim);
  const ReductionLoops<2> loops(self.sizes(), {self.strides(), out_strides.span()}, reduced);
  plugin::visit(out.dtype(), [&](auto out_tag) {
    using Out = typename decltype(out_tag)::type;
    plugin::visit(self.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (widens_exactly(plugin::kDTypeOf<T>, plugin::kDTypeOf<Out>)) {
        sum_groups(loops, self.data<const T>(), out.data<Out>(), average);
      }
    });
  });
}

// Whether `value` takes the place of `best`, the largest so far: NaN counts as larger than
// everything, and the first of equals (or of NaNs) is kept, as in PyTorch.
template <typename C>
bool beats(C value, C best) {
  return is_nan(value) ? !is_nan(best) : value > best;
}

// max_with_index for `count` groups lying side by side (group j's elements at `first` + j *
// `step`), as sum_side_by_side sums them: each reduced position compares a row of the input with
// a row of running maxima, selecting rather than branching, so that the loop vectorises.
template <typename T, typename Store>
BP_CPU_MULTIVERSIONED void max_side_by_side(const ReductionLoops<3>& loops,
                                            const Offsets<3>& first, const Offsets<3>& step,
                                            int64_t count, const T* input, Store&& store) {
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
constexpr int kMaxVectors = 8;

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

// The largest element of each group, and its position in the group (the first one; NaN counts
// as larger than everything, as in PyTorch). Either output may be absent. The meta step
// refuses empty groups already; the kernel checks as well, since an empty group has no maximum
// to write.
void max_with_index(std::string_view op, const TensorView& self, const DimValues<bool>& reduced,
                    bool keepdim, const TensorView* values, const TensorView* indices) {
  if (values) require_dtype(op, "values", *values, self.dtype());
  if (indices) require_dtype(op, "indices", *indices, kInt64);
  const DimValues<int64_t> value_strides = values
                                               ? reduced_output_strides(*values, reduced, keepdim)
                                               : DimValues<int64_t>(reduced.size());
  const DimValues<int64_t> index_strides = indices
                                               ? reduced_output_strides(*indices, reduced, keepdim)
                                               : DimValues<int64_t>(reduced.size());
  const ReductionLoops<3> loops(
      self.sizes(), {self.strides(), value_strides.span(), index_strides.span()}, reduced);
  check_nonempty_reduction(op, loops.group_size());
  plugin::visit(self.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    const T* input = self.data<const T>();
    const auto store = [&](int64_t value_at, int64_t index_at, C best, int64_t best_position) {
      if (values) values->data<T>()[value_at] = static_cast<T>(best);
      if (indices) indices->data<int64_t>()[index_at] = best_position;
    };
    if (loops.groups_side_by_side()) {
      loops.for_each_group_run<NoScratch>(
          [&](const Offsets<3>& first, const Offsets<3>& step, int64_t runs, NoScratch&) {
            max_side_by_side(loops, first, step, runs, input, store);
          });
      return;
    }
    loops.for_each_group([&](const Offsets<3>& group) {
      C best{};
      int64_t best_position = -1;
      int64_t position = 0;
      // Rows come in order, each after every position before it.
      const auto take = [&](C value, int64_t at) {
        if (best_position < 0 || beats(value, best)) {
          best = value;
          best_position = position + at;
        }
      };
      loops.for_each_row_in_group(
          group, [&](const Offsets<3>& start, const Offsets<3>& step, int64_t length) {
            const T* row = input + start[0];
            if (step[0] == 1) {
              const auto [row_best, row_position] = first_max_of_row(row, length);
              take(row_best, row_position);
            } else {
              for (int64_t i = 0; i < length; ++i) take(static_cast<C>(row[i * step[0]]), i);
            }
            position += length;
          });
      store(group[1], group[2], best, best_position);
    });
  });
}

}  // namespace

void sum_IntList_out(const TensorView& self, std::optional<std::span<const int64_t>> dim,
                     bool keepdim, std::optional<bp::DType> /*dtype: out already has it*/,
                     const TensorView& out) {
  sum_into("sum", self, reduced_dims("sum", self.dim(), dim),
           keepdim, out, /*average=*/false);
}

void mean_out(const TensorView& self, std::optional<std::span<const int64_t>> dim, bool keepdim,
              std::optional<bp::DType> /*dtype: out already has it*/, const TensorView& out) {
  sum_into("mean", self, reduced_dims("mean", self.dim(), dim),
           keepdim, out, /*average=*/true);
}

void amax_out(const TensorView& self, std::span<const int64_t> dim, bool keepdim,
              const TensorView& out) {
  max_with_index("amax", self, reduced_dims("amax", self.dim(), dim), keepdim, &out, nullptr);
}

// PyTorch names max.dim's outputs `max` (the values) and `max_values` (the indices).
void max_dim_max(const TensorView& self, int64_t dim, bool keepdim, const TensorView& max,
                 const TensorView& max_values) {
  max_with_index("max", self, single_reduced_dim("max", self.dim(), dim), keepdim, &max,
                 &max_values);
}

// Without a dim, the index is into the flattened input.
void argmax_out(const TensorView& self, std::optional<int64_t> dim, bool keepdim,
                const TensorView& out) {
  const DimValues<bool> reduced = single_reduced_dim_or_all("argmax", self.dim(), dim);
  max_with_index("argmax", self, reduced, keepdim, nullptr, &out);
}

}  // namespace bp::cpu
