// Activation functions of one element in the compute type, shared by the elementwise kernels
// and the matrix products that fuse an activation (_addmm_activation).
#pragma once

#include "vector_math.h"

#include <cmath>
#include <numbers>

namespace bp::cpu {

// Written as "x < 0 ? 0 : x" so that NaN passes through, as PyTorch's relu does.
template <typename C>
C relu_of(C x) {
  return x < C(0) ? C(0) : x;
}

// GELU, exact: x * Phi(x) with Phi the standard normal CDF.
template <typename C>
C gelu_erf(C x) {
  return C(0.5) * x * (C(1) + std::erf(x / std::numbers::sqrt2_v<C>));
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
