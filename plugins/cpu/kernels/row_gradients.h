// The arithmetic of the gradients of softmax, log_softmax and layer norm on one group of
// elements, a contiguous row of its compute type C (float, or double): loops that vectorise,
// their sums kept in interleaved lanes (so that a sum is the same bits on any thread).
#pragma once

#include "kernels/multiversion.h"
#include "kernels/transcendental.h"

#include <cstdint>

namespace bp::cpu {

// Sums kept as this many interleaved partial sums: the adds of one row are independent and
// vectorise.
inline constexpr int64_t kGradientLanes = 16;

// The sum of f(i) for i < n, in lanes of C added pairwise at the end.
template <typename C, typename Fn>
C lane_sum(int64_t n, Fn&& f) {
  C lanes[kGradientLanes] = {};
  int64_t i = 0;
  for (; i + kGradientLanes <= n; i += kGradientLanes) {
    for (int64_t k = 0; k < kGradientLanes; ++k) lanes[k] += f(i + k);
  }
  for (int64_t k = 0; i < n; ++i, ++k) lanes[k] += f(i);
  for (int64_t width = kGradientLanes / 2; width > 0; width /= 2) {
    for (int64_t k = 0; k < width; ++k) lanes[k] += lanes[k + width];
  }
  return lanes[0];
}

// softmax's gradient from its output y: dx = y (g - sum(g y)); log_softmax's from its output
// y = log p: dx = g - e^y sum(g).
template <typename C>
BP_CPU_MULTIVERSIONED void softmax_backward_span(const C* g, const C* y, C* dx, int64_t n,
                                                 bool log) {
  if (log) {
    const C total = lane_sum<C>(n, [&](int64_t i) { return g[i]; });
    for (int64_t i = 0; i < n; ++i) dx[i] = g[i] - exp_of(y[i]) * total;
  } else {
    const C dot = lane_sum<C>(n, [&](int64_t i) { return g[i] * y[i]; });
    for (int64_t i = 0; i < n; ++i) dx[i] = y[i] * (g[i] - dot);
  }
}

// One group of layer norm's gradient: with x^ = (x - mean) rstd and h = g w (g where weight is
// absent), dx = rstd (h - mean(h) - x^ mean(h x^)); and the group's share of the parameters'
// gradients, weight_sums += g x^ and bias_sums += g.
template <typename C>
BP_CPU_MULTIVERSIONED void layer_norm_backward_span(const C* g, const C* x, const C* weight,
                                                    C mean, C rstd, C* dx, int64_t n,
                                                    C* weight_sums, C* bias_sums) {
  const auto h = [&](int64_t i) { return weight ? g[i] * weight[i] : g[i]; };
  const C h_sum = lane_sum<C>(n, h);
  const C hx_sum = lane_sum<C>(n, [&](int64_t i) { return h(i) * (x[i] - mean) * rstd; });
  const C h_mean = h_sum / static_cast<C>(n);
  const C hx_mean = hx_sum / static_cast<C>(n);
  for (int64_t i = 0; i < n; ++i) {
    const C normalized = (x[i] - mean) * rstd;
    weight_sums[i] += g[i] * normalized;
    bias_sums[i] += g[i];
    dx[i] = rstd * (h(i) - h_mean - normalized * hx_mean);
  }
}

}  // namespace bp::cpu
