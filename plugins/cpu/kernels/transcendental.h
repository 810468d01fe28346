// exp, log, tanh and erfc in float lanes (one float or a Vector<float>), written so that loops of
// them vectorise: no branches (both sides of a choice are computed, then one is selected), no
// tables, no library calls; each says how close it is to the exact value. exp_of, log_of and
// tanh_of pick them for float and the C library's functions for double.
#pragma once

#include "kernels/vector_types.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>
#include <type_traits>

namespace bp::cpu {

// e^r for |r| <= ln(2)/2, in float lanes: a degree-6 polynomial, a Chebyshev fit on that
// interval, 2e-9 from e^r. exp_lanes and erfc_over_sqrt2_lanes scale it by 2^n.
template <typename F>
F exp_reduced_lanes(F r) {
  F p = lanes_of<F>(1.3942159833661436e-3f);
  p = p * r + 8.375968226311425e-3f;
  p = p * r + 4.1666340142225575e-2f;
  p = p * r + 1.6666405302634305e-1f;
  p = p * r + 5.000000050018797e-1f;
  p = p * r + 1.00000004003887f;
  p = p * r + 1.0f;
  return p;
}

// e^x for float lanes (F is float or Vector<float>), within 2 ulp of the exact value: inf
// above ln(FLT_MAX), subnormal results down to 2^-149, 0 below, NaN for NaN. Scalar and vector
// lanes compute the same bits.
//
// x = n ln 2 + r with n an integer and |r| <= ln(2)/2; e^r from exp_reduced_lanes; 2^n as two
// factors 2^(n/2), so that results near the bottom of the range round once, like any subnormal.
template <typename F>
F exp_lanes(F x) {
  using Bits = LaneBits<F>;
  using SignedBits = SignedLaneBits<F>;
  const auto constant = [](float value) { return lanes_of<F>(value); };
  // Past these, e^x overflows or rounds to 0 anyway; NaN fails both comparisons and stays NaN.
  x = x > 89.0f ? constant(89.0f) : x;
  x = x < -104.0f ? constant(-104.0f) : x;
  // Adding 1.5 * 2^23 rounds to an integer held in the low mantissa bits.
  constexpr float kRoundingShift = 12582912.0f;
  const F shifted = x * 1.44269504088896341f + kRoundingShift;
  const F n = shifted - kRoundingShift;
  // ln 2 in two parts, the first short enough that n times it is exact (Cody and Waite).
  F r = x - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  const F p = exp_reduced_lanes(r);
  const Bits n_bits = std::bit_cast<Bits>(shifted) - std::bit_cast<uint32_t>(kRoundingShift);
  const Bits half_n = std::bit_cast<Bits>(std::bit_cast<SignedBits>(n_bits) >> 1);
  const F scale = std::bit_cast<F>((half_n + 127u) << 23);
  const F rest_scale = std::bit_cast<F>((n_bits - half_n + 127u) << 23);
  return p * scale * rest_scale;
}

// e^x for x <= 0, -inf included, in float lanes: the exp of softmax, whose arguments are
// elements minus their row's maximum. Within 4 ulp down to e^-87 (just above FLT_MIN); 0
// below. Cheaper than exp_lanes: no overflow, no subnormal results, no NaN (softmax_span
// settles rows with NaN before), and a degree-5 polynomial: a least-squares fit of the relative
// error on 4000 Chebyshev nodes, its constant term held at 1 so that e^0 is 1 exactly (a row's
// maximum then adds exactly 1 to softmax's sum, and log_softmax of a one-element row is 0), within
// 1.1e-7 of e^r, and within 1.7e-7 evaluated in float.
template <typename F>
F exp_of_nonpositive(F x) {
  using Bits = LaneBits<F>;
  constexpr float kFlushBelow = -87.0f;
  const auto flushed = x < kFlushBelow;
  x = flushed ? lanes_of<F>(kFlushBelow) : x;
  constexpr float kRoundingShift = 12582912.0f;  // as in exp_lanes
  const F shifted = x * 1.44269504088896341f + kRoundingShift;
  const F n = shifted - kRoundingShift;
  F r = x - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  F p = lanes_of<F>(8.261517265780942e-3f);
  p = p * r + 4.189877815609199e-2f;
  p = p * r + 1.666811483367916e-1f;
  p = p * r + 4.9999140693038974e-1f;
  p = p * r + 9.999995313977327e-1f;
  p = p * r + 1.0f;
  // p * 2^n, n in [-126, 0], by adding n to p's exponent: the result is a normal float.
  const Bits n_bits = std::bit_cast<Bits>(shifted) - std::bit_cast<uint32_t>(kRoundingShift);
  const F result = std::bit_cast<F>(std::bit_cast<Bits>(p) + (n_bits << 23));
  return flushed ? lanes_of<F>(0.0f) : result;
}

// tanh(x) for float lanes, within 3 ulp of the exact value (checked against double over every
// float exponent), ±1 at ±inf, NaN for NaN, -0 for -0. Scalar and vector lanes compute the
// same bits.
//
// Below |x| = 0.3, the odd Taylor series to x^11 (the first term left out is under 2e-8 of the
// result there); above, (1 - e) / (1 + e) with e = e^(-2|x|) <= 0.55, whose numerator no longer
// cancels; both on |x|, the sign of x put back last. Both are computed and one is selected, so
// that loops vectorise.
template <typename F>
F tanh_lanes(F x) {
  using Bits = LaneBits<F>;
  const Bits sign = std::bit_cast<Bits>(x) & 0x80000000u;
  const F magnitude = std::bit_cast<F>(std::bit_cast<Bits>(x) & 0x7fffffffu);
  const F e = exp_lanes(magnitude * -2.0f);
  const F far = (1.0f - e) / (1.0f + e);
  const F square = magnitude * magnitude;
  F series = lanes_of<F>(1382.0f / 155925.0f);
  series = series * square - 62.0f / 2835.0f;
  series = series * square + 17.0f / 315.0f;
  series = series * square - 2.0f / 15.0f;
  series = series * square + 1.0f / 3.0f;
  const F near = magnitude - magnitude * square * series;
  return std::bit_cast<F>(std::bit_cast<Bits>(magnitude < 0.3f ? near : far) | sign);
}

// ln(x) for float lanes, within 1 ulp of the exact value (checked against double over every
// float exponent, subnormals included): -inf at ±0, +inf at +inf, NaN below 0 and for NaN.
// Scalar and vector lanes compute the same bits.
//
// x = 2^e m with m in [sqrt(2)/2, sqrt(2)), so that f = m - 1 is exact and |f| < 0.42. With
// s = f / (2 + f), ln(1 + f) = 2 atanh(s) = f - f^2/2 + s (f^2/2 + R), R = 2 (s^2/3 + s^4/5 +
// s^6/7 + s^8/9) (|s| < 0.18: the first term left out is under 3e-10): f is exact and the rest
// small, so rounding touches only the small terms. e ln 2 is added in two parts, as in
// exp_lanes. A subnormal x is scaled by 2^23 first.
template <typename F>
F log_lanes(F x) {
  using Bits = LaneBits<F>;
  const auto constant = [](float value) { return lanes_of<F>(value); };
  constexpr float kTwoTo23 = 8388608.0f;
  const auto subnormal = x < std::numeric_limits<float>::min();
  const F normal = subnormal ? x * kTwoTo23 : x;
  const Bits bits = std::bit_cast<Bits>(normal);
  // The biased exponent (bits 23..30) as a float: set into the mantissa of 2^23, which is then
  // taken away.
  F exponent = std::bit_cast<F>((bits >> 23) | 0x4b000000u) - (kTwoTo23 + 127.0f);
  exponent = subnormal ? exponent - 23.0f : exponent;
  F m = std::bit_cast<F>((bits & 0x007fffffu) | 0x3f800000u);
  const auto above_sqrt2 = m > std::numbers::sqrt2_v<float>;
  m = above_sqrt2 ? m * 0.5f : m;
  exponent = above_sqrt2 ? exponent + 1.0f : exponent;
  const F f = m - 1.0f;
  const F s = f / (2.0f + f);
  const F square = s * s;
  F r = constant(2.0f / 9.0f);
  r = r * square + 2.0f / 7.0f;
  r = r * square + 2.0f / 5.0f;
  r = r * square + 2.0f / 3.0f;
  r = r * square;
  const F half_f_squared = 0.5f * f * f;
  const F log1p_f = f - (half_f_squared - (s * (half_f_squared + r) + exponent * -2.12194440e-4f));
  F result = exponent * 0.693359375f + log1p_f;
  constexpr float kInfinity = std::numeric_limits<float>::infinity();
  result = x == kInfinity ? x : result;
  result = x == 0.0f ? constant(-kInfinity) : result;
  return x >= 0.0f ? result : constant(std::numeric_limits<float>::quiet_NaN());
}

// A function in the compute type C: `lanes` (vectorisable float code) for float, `library`
// (the C library's) for double.
template <typename C, typename Lanes, typename Library>
C in_compute_type(C x, Lanes lanes, Library library) {
  if constexpr (std::is_same_v<C, float>) {
    return lanes(x);
  } else {
    return library(x);
  }
}

// e^x in the compute type C.
template <typename C>
C exp_of(C x) {
  return in_compute_type(
      x, [](float v) { return exp_lanes(v); }, [](C v) { return std::exp(v); });
}

// erfc(m / sqrt(2)) for m >= 0 (and NaN) in float lanes, the upper tail of the standard normal
// distribution times 2, with a small relative error down to where it leaves the normal floats
// (m near 13): e^(-m^2 / 2) R(m), R = erfc(m / sqrt 2) e^(m^2 / 2) falling smoothly from 1 to 0.
// R = t S(t) with t = 1 / (1 + m / 4) in (0, 1]; S runs from 1 at t = 1 to sqrt(2 / pi) / 4 as t
// nears 0, and is a degree-9 polynomial in t - 1/2 (a Chebyshev interpolant over m in [0, 16],
// within 1.5e-8 of S; around t = 1/2 its terms shrink fast, so that rounding stays small).
// m / 4 is exact. The exponent, where rounding would be magnified by m^2, is exact: m's top 12
// significant bits square without rounding, and the small rest joins the reduced argument of the
// exponential. 2^n is applied as 2^(n + 64), then 2^-64 last, so that results near the bottom
// of the range round once, like any subnormal. Past m = 16, where the result is 0, m is taken
// as 16.
template <typename F>
F erfc_over_sqrt2_lanes(F m) {
  using Bits = LaneBits<F>;
  m = m > 16.0f ? lanes_of<F>(16.0f) : m;  // NaN stays
  const F high = std::bit_cast<F>(std::bit_cast<Bits>(m) & 0xfffff000u);
  const F half_square = high * high * -0.5f;  // exact
  const F rest = (m - high) * (m + high);     // m^2 - high^2, below m^2 / 2^11
  // e^(half_square - rest / 2) as in exp_lanes: n ln 2 + r, half_square - n ln 2 exact.
  constexpr float kRoundingShift = 12582912.0f;
  const F shifted = half_square * 1.44269504088896341f + kRoundingShift;
  const F n = shifted - kRoundingShift;
  F r = half_square - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  r = r - rest * 0.5f;
  const F p = exp_reduced_lanes(r);
  // n >= -185: 2^(n + 64) is a normal float.
  const F scale = std::bit_cast<F>(
      (std::bit_cast<Bits>(shifted) - (std::bit_cast<uint32_t>(kRoundingShift) - 127u - 64u))
      << 23);
  const F t = 1.0f / (1.0f + m * 0.25f);
  const F w = t - 0.5f;
  constexpr float kSeries[] = {
      3.776425693e-01f, 6.078965716e-01f,  7.742734160e-01f,  7.460953821e-01f, 4.832438359e-01f,
      1.203581821e-01f, -1.125094097e-01f, -1.000556779e-01f, 2.291832261e-02f, 3.331131175e-02f};
  F s = lanes_of<F>(kSeries[9]);
  for (int j = 8; j >= 0; --j) s = s * w + kSeries[j];
  return p * scale * (t * s) * 0x1p-64f;
}

// tanh(x) in the compute type C.
template <typename C>
C tanh_of(C x) {
  return in_compute_type(
      x, [](float v) { return tanh_lanes(v); }, [](C v) { return std::tanh(v); });
}

// ln(x) in the compute type C.
template <typename C>
C log_of(C x) {
  return in_compute_type(
      x, [](float v) { return log_lanes(v); }, [](C v) { return std::log(v); });
}

}  // namespace bp::cpu
