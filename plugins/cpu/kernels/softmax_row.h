// The two reductions every softmax makes of a row (softmax, log_softmax and fused attention's
// online softmax): its maximum, and its sum of e^(x - maximum), in vector lanes.
#pragma once

#include "kernels/prefetch.h"
#include "kernels/transcendental.h"
#include "kernels/vector_types.h"

#include <algorithm>
#include <cstdint>
#include <limits>

namespace bp::cpu {

// The sum in double of e^(x[i] - shift) for i < count, each term also stored to y[i] unless y
// is null; prefetches `next` meanwhile. shift is the maximum of the x[i], and finite.
template <typename C>
double exp_shifted_and_sum(const C* x, C* y, int64_t count, C shift, const NextRows<C>& next) {
  double sum = 0;
  for (int64_t i = 0; i < count; ++i) {
    next.prefetch(i);
    const C e = exp_of(x[i] - shift);
    if (y != nullptr) y[i] = e;
    sum += static_cast<double>(e);
  }
  return sum;
}

// The largest of x[0..count), NaN if any element is NaN, -inf when count is 0. (GCC does not
// vectorise a loop of IEEE maximums by itself.)
template <typename C>
C max_of(const C* x, int64_t count) {
  constexpr int64_t kLanes = kLanesOf<C>;
  constexpr C kLowest = -std::numeric_limits<C>::infinity();
  Vector<C> max0 = broadcast(kLowest);
  Vector<C> max1 = max0;
  decltype(max0 != max0) nan_lanes{};  // all bits set in lanes that saw a NaN
  int64_t i = 0;
  for (; i + 2 * kLanes <= count; i += 2 * kLanes) {
    const Vector<C> a = load_vector(x + i);
    const Vector<C> b = load_vector(x + i + kLanes);
    max0 = a > max0 ? a : max0;
    max1 = b > max1 ? b : max1;
    nan_lanes |= (a != a) | (b != b);
  }
  max0 = max1 > max0 ? max1 : max0;
  C max = kLowest;
  bool nan = false;
  for (int64_t k = 0; k < kLanes; ++k) {
    max = max0[k] > max ? max0[k] : max;
    nan = nan || nan_lanes[k] != 0;
  }
  for (; i < count; ++i) {
    max = x[i] > max ? x[i] : max;
    nan = nan || x[i] != x[i];
  }
  return nan ? std::numeric_limits<C>::quiet_NaN() : max;
}

// For float, exp, store and sum run in one pass of vector lanes. Every x[i] - shift must be at
// most 0 (shift is the maximum, and finite), as exp_of_nonpositive requires.
template <>
inline double exp_shifted_and_sum(const float* x, float* y, int64_t count, float shift,
                                  const NextRows<float>& next) {
  constexpr int64_t kLanes = kLanesOf<float>;
  // Each lane adds up to kBlock / kLanes values in float, then into a double.
  constexpr int64_t kBlock = 8 * kLanes;
  double lane_sums[kLanes] = {};
  int64_t i = 0;
  while (i + kLanes <= count) {
    Vector<float> block_sums{};
    const int64_t block_end = std::min(count, i + kBlock);
    for (; i + kLanes <= block_end; i += kLanes) {
      next.prefetch(i);
      const Vector<float> e = exp_of_nonpositive(load_vector(x + i) - shift);
      if (y != nullptr) store_vector(y + i, e);
      block_sums += e;
    }
    for (int64_t k = 0; k < kLanes; ++k) lane_sums[k] += block_sums[k];
  }
  double sum = 0;
  for (; i < count; ++i) {
    const float e = exp_of_nonpositive(x[i] - shift);
    if (y != nullptr) y[i] = e;
    sum += e;
  }
  for (int64_t k = 0; k < kLanes; ++k) sum += lane_sums[k];
  return sum;
}

}  // namespace bp::cpu
