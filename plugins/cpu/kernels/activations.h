// Activation functions of one element in the compute type, shared by the elementwise kernels
// and the matrix products that fuse an activation (_addmm_activation), and their derivatives
// (gelu_backward).
#pragma once

#include "kernels/transcendental.h"

#include <bit>
#include <cmath>
#include <numbers>
#include <type_traits>

namespace bp::cpu {

// Written as "x < 0 ? 0 : x" so that NaN passes through, as PyTorch's relu does.
template <typename C>
C relu_of(C x) {
  return x < C(0) ? C(0) : x;
}

// GELU, exact: x * Phi(x) with Phi the standard normal CDF. In float lanes through erfc, so that
// neither side cancels: x - x/2 erfc(x / sqrt 2) for x >= 0, x/2 erfc(-x / sqrt 2) below (which
// keeps -0 and NaN at -inf, as the formula with erf gives; beyond |x| = 20 erfc is 0).
template <typename F>
F gelu_erf_lanes(F x) {
  using Bits = LaneBits<F>;
  const F magnitude = std::bit_cast<F>(std::bit_cast<Bits>(x) & 0x7fffffffu);
  const F tail = 0.5f * x * erfc_over_sqrt2_lanes(magnitude);
  return x > 0.0f ? x - (magnitude > 20.0f ? lanes_of<F>(0.0f) : tail) : tail;
}

// In double, as x/2 erfc(-x / sqrt 2), which does not cancel for negative x as 1 + erf does.
template <typename C>
C gelu_erf(C x) {
  if constexpr (std::is_same_v<C, float>) {
    return gelu_erf_lanes(x);
  } else {
    return C(0.5) * x * std::erfc(-x / std::numbers::sqrt2_v<C>);
  }
}

// GELU, tanh approximation (Hendrycks & Gimpel), as PyTorch's approximate='tanh'; through
// tanh_of, so that float loops of it vectorise.
template <typename C>
C gelu_tanh(C x) {
  constexpr C kSqrt2OverPi = std::numbers::sqrt2_v<C> * std::numbers::inv_sqrtpi_v<C>;
  constexpr C kCubic = C(0.044715);
  return C(0.5) * x * (C(1) + tanh_of(kSqrt2OverPi * (x + kCubic * x * x * x)));
}

// d/dx of exact GELU: Phi(x) + x phi(x), with phi the standard normal density. Phi through erfc
// of |x| as in gelu_erf, so that neither tail cancels.
template <typename C>
C gelu_erf_derivative(C x) {
  constexpr C kInvSqrt2Pi = std::numbers::inv_sqrtpi_v<C> / std::numbers::sqrt2_v<C>;
  const C density = kInvSqrt2Pi * exp_of(C(-0.5) * x * x);
  C cdf;
  if constexpr (std::is_same_v<C, float>) {
    const float upper_tail = 0.5f * erfc_over_sqrt2_lanes(std::abs(x));
    cdf = x > 0.0f ? 1.0f - upper_tail : upper_tail;
  } else {
    cdf = C(0.5) * std::erfc(-x / std::numbers::sqrt2_v<C>);
  }
  return cdf + x * density;
}

// d/dx of the tanh approximation of GELU, 0.5 x (1 + tanh(u)) with u = k (x + c x^3):
// 0.5 (1 + tanh(u)) + 0.5 x (1 - tanh(u)^2) k (1 + 3 c x^2), PyTorch's formula.
template <typename C>
C gelu_tanh_derivative(C x) {
  constexpr C kSqrt2OverPi = std::numbers::sqrt2_v<C> * std::numbers::inv_sqrtpi_v<C>;
  constexpr C kCubic = C(0.044715);
  const C square = x * x;
  const C u = kSqrt2OverPi * (x + kCubic * square * x);
  // 1 + tanh(u) = 2 sigmoid(2u) and 1 - tanh(u)^2 = 4 sigmoid(2u) sigmoid(-2u): written with
  // tanh, both cancel where tanh(u) nears -1 and lose most of their digits.
  const C rising = C(1) / (C(1) + exp_of(C(-2) * u));
  const C falling = C(1) / (C(1) + exp_of(C(2) * u));
  // Far from 0 the product of the sigmoids underflows to 0 while 1 + 3 c x^2 may overflow: the
  // term is 0 there, not 0 * inf.
  const C spread = rising * falling;
  const C slope =
      spread == C(0) ? C(0) : C(2) * x * spread * kSqrt2OverPi * (C(1) + C(3) * kCubic * square);
  return rising + slope;
}

}  // namespace bp::cpu
