// Sums kept as interleaved partial sums, so that the adds vectorise and a sum is the same bits
// whichever thread computes it.
#pragma once

#include "kernels/strided_loop.h"

#include <algorithm>
#include <cstdint>

namespace bp::cpu {

// A running sum kept as kLanes interleaved partial sums of type Acc: element i of a contiguous
// run goes to lane i % kLanes, so the adds of one run are independent and vectorise. Which
// lane each element goes to depends only on the runs added, in order, so a sum is the same
// bits whichever thread computes it. Partial sums also add up more accurately than one
// running total.
template <typename Acc>
class PartialSums {
 public:
  static constexpr int64_t kLanes = 16;

  struct Unchanged {
    Acc operator()(Acc value) const { return value; }
  };

  // Adds f(x[i]) for i < count, x[i] read as its compute type and converted to Acc.
  template <typename T, typename F = Unchanged>
  void add(const T* x, int64_t count, F f = {}) {
    if constexpr (kConvertsToCompute<T>) {
      // Converted a block at a time by convert_elements' loop; blocks are whole multiples of
      // the lanes, so every element keeps its lane.
      constexpr int64_t kBlock = 16 * kLanes;
      compute_t<T> converted[kBlock];
      for (int64_t begin = 0; begin < count; begin += kBlock) {
        const int64_t length = std::min(kBlock, count - begin);
        convert_elements(x + begin, converted, length);
        add(converted, length, f);
      }
    } else {
      int64_t i = 0;
      for (; i + kLanes <= count; i += kLanes) {
        for (int64_t k = 0; k < kLanes; ++k) lanes_[k] += f(static_cast<Acc>(x[i + k]));
      }
      for (int64_t k = 0; i < count; ++i, ++k) lanes_[k] += f(static_cast<Acc>(x[i]));
    }
  }

  // Adds f(x[i * step]) for i < count, into one lane.
  template <typename T, typename F = Unchanged>
  void add_strided(const T* x, int64_t count, int64_t step, F f = {}) {
    for (int64_t i = 0; i < count; ++i) lanes_[0] += f(static_cast<Acc>(compute(x[i * step])));
  }

  // The lanes added pairwise.
  Acc total() const {
    Acc sums[kLanes];
    for (int64_t k = 0; k < kLanes; ++k) sums[k] = lanes_[k];
    for (int64_t width = kLanes / 2; width > 0; width /= 2) {
      for (int64_t k = 0; k < width; ++k) sums[k] += sums[k + width];
    }
    return sums[0];
  }

 private:
  template <typename T>
  static compute_t<T> compute(T value) {
    return static_cast<compute_t<T>>(value);
  }

  Acc lanes_[kLanes] = {};
};

}  // namespace bp::cpu
