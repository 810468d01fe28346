// Reductions and other per-group kernels (softmax, layer norm): the input's dimensions split
// into kept ones, whose indices name the groups, and reduced ones, whose indices name the
// elements of a group. Dimensions may be reduced in any combination and strides are arbitrary.
#pragma once

#include "strided_loop.h"

#include <backplane/sdk/reduction_dims.hpp>

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
    for (size_t d = 0; d < sizes.size(); ++d) {
      Offsets<N> stride;
      for (size_t k = 0; k < N; ++k) stride[k] = strides[k][d];
      if (reduced[d]) {
        in_group_.push_dim(sizes[d], stride);
        group_size_ *= sizes[d];
      } else {
        groups_.push_dim(sizes[d], stride);
      }
    }
  }

  // The number of elements in each group (1 when nothing is reduced, 0 when a reduced
  // dimension is empty).
  int64_t group_size() const { return group_size_; }

  // Calls fn(group) with the offsets of each group's first element, in row-major order.
  template <typename Fn>
  void for_each_group(Fn&& fn) const {
    groups_.for_each_row([&](const Offsets<N>& start, const Offsets<N>& step, int64_t length) {
      Offsets<N> group = start;
      for (int64_t i = 0; i < length; ++i, advance(group, step))
        fn(static_cast<const Offsets<N>&>(group));
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
  StridedLoop<N> groups_;
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
