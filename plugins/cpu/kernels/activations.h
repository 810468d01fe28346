// Activation functions of one element in the compute type, shared by the elementwise kernels
// and the matrix products that fuse an activation (_addmm_activation).
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

}  // namespace bp::cpu
