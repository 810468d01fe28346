// Reductions and other per-group kernels (softmax, layer norm): the input's dimensions split
// into kept ones, whose indices name the groups, and reduced ones, whose indices name the
// elements of a group. Dimensions may be reduced in any combination and strides are arbitrary.
#pragma once

#include "parallel_elements.h"
#include "strided_loop.h"

#include <backplane/sdk/reduction_dims.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace bp::cpu {

// N operands addressed over the input's shape (strides[k] for operand k; see
// reduced_output_strides), walked group by group.
template <size_t N>
class ReductionLoops {
 public:
  ReductionLoops(std::span<const int64_t> sizes,
                 const std::array<std::span<const int64_t>, N>& strides,
                 const DimValues<bool>& reduced) {
    check_dim_count(sizes.size());
    for (size_t d = 0; d < sizes.size(); ++d) {
      Offsets<N> stride;
      for (size_t k = 0; k < N; ++k) stride[k] = strides[k][d];
      if (reduced[d]) {
        in_group_.push_dim(sizes[d], stride);
        group_size_ *= sizes[d];
      } else {
        kept_[kept_count_++] = {sizes[d], stride};
        group_count_ *= sizes[d];
      }
    }
  }

  // The number of elements in each group (1 when nothing is reduced, 0 when a reduced
  // dimension is empty).
  int64_t group_size() const { return group_size_; }

  // Calls fn(group) with the offsets of each group's first element. Large reductions split the
  // groups along the outermost kept dimension across the thread pool, so fn must only write
  // what belongs to its group; each group is still reduced by one thread, in order, so results
  // do not depend on the thread count.
  template <typename Fn>
  void for_each_group(Fn&& fn) const {
    if (group_count_ == 0) return;
    const KeptDim* const split = std::find_if(kept_.begin(), kept_.begin() + kept_count_,
                                              [](const KeptDim& dim) { return dim.size > 1; });
    if (split == kept_.begin() + kept_count_) {  // one group
      fn(Offsets<N>{});
      return;
    }
    const int64_t elements_per_index = group_count_ / split->size * group_size_;
    parallel_for(split->size, grain_for(elements_per_index), [&](int64_t begin, int64_t end) {
      StridedLoop<N> groups;
      for (const KeptDim* dim = kept_.begin(); dim != kept_.begin() + kept_count_; ++dim)
        groups.push_dim(dim == split ? end - begin : dim->size, dim->stride);
      Offsets<N> first{};
      advance(first, split->stride, begin);
      groups.for_each_row(
          [&](const Offsets<N>& start, const Offsets<N>& step, int64_t length) {
            Offsets<N> group = start;
            for (int64_t i = 0; i < length; ++i, advance(group, step))
              fn(static_cast<const Offsets<N>&>(group));
          },
          first);
    });
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

// PyTorch refuses max-like reductions over nothing, even when the output is empty too.
inline void check_nonempty_reduction(std::string_view op, int64_t group_size) {
  if (group_size == 0) {
    throw Error(BP_STATUS_INVALID_ARGUMENT,
                std::string(op) + "(): cannot reduce over a zero-size dimension");
  }
}

}  // namespace bp::cpu
