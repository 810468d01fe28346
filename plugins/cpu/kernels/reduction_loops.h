// The loops of reductions and other per-group kernels (softmax, layer norm, RMS norm): the
// input's dimensions split into kept ones, whose indices name the groups, and reduced ones,
// whose indices name the elements of a group. Dimensions may be reduced in any combination and
// strides are arbitrary. Also the gathering of a group into a row of its compute type and back,
// and the refusal of max-like reductions over nothing.
#pragma once

#include "kernels/multiversion.h"
#include "kernels/parallel_elements.h"
#include "kernels/prefetch.h"
#include "kernels/row_conversion.h"
#include "kernels/strided_loop.h"

#include <backplane/sdk/reduction_dims.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace bp::cpu {

// How many groups lying side by side the sum and max kernels reduce at once, a row of the input
// at a time. Their running values (32 KB of doubles for a sum) stay in the L1 and L2 caches
// while rows of the input stream past; the wider the tile, the longer each row's stretch of
// sequential reads, which the hardware prefetcher follows best.
inline constexpr int64_t kSideBySideTile = 4096;

// The Scratch of a for_each_group_run call that needs none.
struct NoScratch {};

// N operands addressed over the input's shape (strides[k] for operand k; see
// reduced_output_strides), walked group by group. Operand 0 is the one read most: the input.
template <size_t N>
class ReductionLoops {
 public:
  ReductionLoops(std::span<const int64_t> sizes,
                 const std::array<std::span<const int64_t>, N>& strides,
                 const DimValues<bool>& reduced) {
    check_dim_count(sizes.size());
    const auto stride_at = [&](size_t d) {
      Offsets<N> stride;
      for (size_t k = 0; k < N; ++k) stride[k] = strides[k][d];
      return stride;
    };
    for (size_t d = 0; d < sizes.size(); ++d) {
      if (reduced[d]) {
        in_group_.push_dim(sizes[d], stride_at(d));
        group_size_ *= sizes[d];
      } else {
        kept_[kept_count_++] = {sizes[d], stride_at(d)};
        group_count_ *= sizes[d];
      }
    }
    // When a group's input elements are strided but neighbouring groups' are adjacent, the
    // kept dimension that makes them adjacent goes innermost, so that runs of groups (see
    // for_each_group_run) lie side by side in memory.
    if (!groups_contiguous_in(0)) {
      KeptDim* const end = kept_.begin() + kept_count_;
      KeptDim* const lanes = std::find_if(kept_.begin(), end, [](const KeptDim& dim) {
        return dim.size > 1 && dim.stride[0] == 1;
      });
      if (lanes != end) std::rotate(lanes, lanes + 1, end);
    }
  }

  // The number of elements in each group (1 when nothing is reduced, 0 when a reduced
  // dimension is empty).
  int64_t group_size() const { return group_size_; }
  int64_t group_count() const { return group_count_; }

  // Whether each group's elements are consecutive in operand k's memory.
  bool groups_contiguous_in(size_t k) const {
    return in_group_.dim_count() == 0 ||
           (in_group_.dim_count() == 1 && in_group_.stride(0)[k] == 1);
  }

  // Whether neighbouring groups' input elements are adjacent while a group's own are not:
  // then each run of groups (see for_each_group_run) is best reduced side by side, a row of
  // the input at a time.
  bool groups_side_by_side() const {
    if (groups_contiguous_in(0)) return false;
    for (size_t d = kept_count_; d-- > 0;) {
      if (kept_[d].size > 1) return kept_[d].stride[0] == 1;
    }
    return false;
  }

  // Every group's offsets, in row-major order of the kept dimensions, on the calling thread.
  std::vector<Offsets<N>> group_offsets() const {
    std::vector<Offsets<N>> offsets;
    if (group_count_ == 0) return offsets;
    offsets.reserve(static_cast<size_t>(group_count_));
    StridedLoop<N> groups;
    for (size_t d = 0; d < kept_count_; ++d) groups.push_dim(kept_[d].size, kept_[d].stride);
    groups.for_each_row([&](const Offsets<N>& start, const Offsets<N>& step, int64_t count) {
      Offsets<N> group = start;
      for (int64_t i = 0; i < count; ++i, advance(group, step)) offsets.push_back(group);
    });
    return offsets;
  }

  // Calls fn(first, step, count, scratch) for runs of `count` groups, the first group's
  // elements starting at offsets `first`, each next group's `step` further. Large reductions
  // split the groups along the outermost kept dimension across the thread pool, so fn must
  // only write what belongs to its groups; each group is still reduced by one thread, in
  // order, so results do not depend on the thread count. `scratch` is a Scratch made for each
  // chunk of groups, for buffers that fn reuses from group to group.
  template <typename Scratch, typename Fn>
  void for_each_group_run(Fn&& fn) const {
    if (group_count_ == 0) return;
    const KeptDim* const end = kept_.begin() + kept_count_;
    const KeptDim* const split =
        std::find_if(kept_.begin(), end, [](const KeptDim& dim) { return dim.size > 1; });
    if (split == end) {  // one group
      Scratch scratch;
      fn(Offsets<N>{}, Offsets<N>{}, int64_t{1}, scratch);
      return;
    }
    const int64_t elements_per_index =
        group_count_ / split->size * std::max<int64_t>(group_size_, 1);
    parallel_for(split->size, grain_for(elements_per_index), [&](int64_t begin, int64_t end_index) {
      StridedLoop<N> groups;
      for (const KeptDim* dim = kept_.begin(); dim != end; ++dim)
        groups.push_dim(dim == split ? end_index - begin : dim->size, dim->stride);
      Offsets<N> first{};
      advance(first, split->stride, begin);
      Scratch scratch;
      groups.for_each_row([&](const Offsets<N>& start, const Offsets<N>& step,
                              int64_t count) { fn(start, step, count, scratch); },
                          first);
    });
  }

  // Calls fn(group, scratch) with the offsets of each group's first element; see
  // for_each_group_run.
  template <typename Scratch, typename Fn>
  void for_each_group_with(Fn&& fn) const {
    for_each_group_run<Scratch>(
        [&](const Offsets<N>& first, const Offsets<N>& step, int64_t count, Scratch& scratch) {
          Offsets<N> group = first;
          for (int64_t i = 0; i < count; ++i, advance(group, step))
            fn(static_cast<const Offsets<N>&>(group), scratch);
        });
  }

  // Calls fn(group) with the offsets of each group's first element; see for_each_group_run.
  template <typename Fn>
  void for_each_group(Fn&& fn) const {
    for_each_group_with<NoScratch>([&](const Offsets<N>& group, NoScratch&) { fn(group); });
  }

  // Calls row(offsets, step, length) for the elements of `group` as rows, in row-major order
  // of the reduced dimensions.
  template <typename RowFn>
  void for_each_row_in_group(const Offsets<N>& group, RowFn&& row) const {
    in_group_.for_each_row(row, group);
  }

  // Calls fn(offsets, position) for each element of `group`, where `position` counts the
  // group's elements in row-major order of the reduced dimensions, from 0.
  template <typename Fn>
  void for_each_in_group(const Offsets<N>& group, Fn&& fn) const {
    int64_t position = 0;
    in_group_.for_each_row(
        [&](const Offsets<N>& start, const Offsets<N>& step, int64_t length) {
          Offsets<N> offsets = start;
          for (int64_t i = 0; i < length; ++i, advance(offsets, step)) {
            fn(static_cast<const Offsets<N>&>(offsets), position++);
          }
        },
        group);
  }

 private:
  // A dimension whose indices name groups.
  struct KeptDim {
    int64_t size;
    Offsets<N> stride;
  };

  std::array<KeptDim, kMaxDims> kept_;
  size_t kept_count_ = 0;
  int64_t group_count_ = 1;
  StridedLoop<N> in_group_;
  int64_t group_size_ = 1;
};

// Operand k's elements of `group`, in order, as C: values[position] for each position.
template <typename C, typename T, size_t N>
BP_CPU_MULTIVERSIONED void gather_group(const ReductionLoops<N>& loops, const Offsets<N>& group,
                                        size_t k, const T* data, C* values) {
  loops.for_each_row_in_group(group,
                              [&](const Offsets<N>& start, const Offsets<N>& step, int64_t length) {
                                convert_row_from(data + start[k], step[k], values, length);
                                values += length;
                              });
}

// The inverse of gather_group: values[position] converted to T into operand k's elements.
template <typename T, typename C, size_t N>
BP_CPU_MULTIVERSIONED void scatter_group(const ReductionLoops<N>& loops, const Offsets<N>& group,
                                         size_t k, const C* values, T* data) {
  loops.for_each_row_in_group(group,
                              [&](const Offsets<N>& start, const Offsets<N>& step, int64_t length) {
                                convert_row_into(values, data + start[k], step[k], length);
                                values += length;
                              });
}

// Calls span_fn(group, x, y, n, next) for each group, where x holds the group's n elements of
// operand 0 (the input) and span_fn writes those of operand 1 (the output) to y, both arrays
// of T's compute type: the tensors' own memory where both are contiguous in the group and T is
// its own compute type, else buffers the group is gathered into and scattered from. `next`
// (NextRows) names the next group's rows, when they are the tensors' own, for span_fn to
// prefetch. The other operands are span_fn's own business. Groups lying side by side are best
// not walked one at a time (each would read one element of every row): the row kernels take
// their own passes over those (row_normalization.h).
template <typename T, size_t N, typename SpanFn>
void for_each_group_span(const ReductionLoops<N>& loops, const T* input, T* output,
                         SpanFn&& span_fn) {
  using C = compute_t<T>;
  const int64_t n = loops.group_size();
  if constexpr (!kConvertsToCompute<T>) {
    if (loops.groups_contiguous_in(0) && loops.groups_contiguous_in(1)) {
      loops.template for_each_group_run<NoScratch>(
          [&](const Offsets<N>& first, const Offsets<N>& step, int64_t count, NoScratch&) {
            Offsets<N> group = first;
            for (int64_t i = 0; i < count; ++i, advance(group, step)) {
              NextRows<C> next;
              if (i + 1 < count) next = {input + group[0] + step[0], output + group[1] + step[1]};
              span_fn(static_cast<const Offsets<N>&>(group), input + group[0], output + group[1], n,
                      static_cast<const NextRows<C>&>(next));
            }
          });
      return;
    }
  }
  struct Buffers {
    std::vector<C> x, y;
  };
  loops.template for_each_group_with<Buffers>([&](const Offsets<N>& group, Buffers& buffers) {
    buffers.x.resize(static_cast<size_t>(n));
    buffers.y.resize(static_cast<size_t>(n));
    gather_group(loops, group, 0, input, buffers.x.data());
    span_fn(group, static_cast<const C*>(buffers.x.data()), buffers.y.data(), n, NextRows<C>{});
    scatter_group(loops, group, 1, static_cast<const C*>(buffers.y.data()), output);
  });
}

// PyTorch refuses max-like reductions over nothing, even when the output is empty too.
inline void check_nonempty_reduction(std::string_view op, int64_t group_size) {
  if (group_size == 0) {
    throw Error(BP_STATUS_INVALID_ARGUMENT,
                std::string(op) + "(): cannot reduce over a zero-size dimension");
  }
}

}  // namespace bp::cpu
