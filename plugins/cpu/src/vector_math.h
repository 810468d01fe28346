// Arithmetic for kernels' inner loops, written so that it vectorises: no branches (both sides
// of a choice are computed, then one is selected), no tables, no library calls. Where GCC does
// not vectorise a loop by itself, the loop is written with GCC's vector extensions (Vector<C>:
// 32 bytes operated on lane by lane), which the AVX2 copy of a multiversioned kernel
// (multiversion.h) runs as single instructions and the baseline copy as pairs of SSE ones.
#pragma once

#include "strided_loop.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numbers>
#include <type_traits>

namespace bp::cpu {

// The widest vector every multiversioned copy handles well.
inline constexpr size_t kVectorBytes = 32;

// The vector for loops whose work is comparing and selecting: the baseline copy takes 32-byte
// comparisons and selects apart lane by lane (measured 3.5x slower than scalar code there, with
// GCC 12), while 16-byte ones are SSE2 instructions in both copies.
inline constexpr size_t kSelectVectorBytes = 16;

namespace vector_detail {
template <typename C, size_t Bytes>
struct VectorOf {
  typedef C type __attribute__((vector_size(Bytes)));  // NOLINT(modernize-use-using)
};
}  // namespace vector_detail

// Bytes (kVectorBytes unless given) of C, with +, *, comparisons and ?: lane by lane.
template <typename C, size_t Bytes = kVectorBytes>
using Vector = typename vector_detail::VectorOf<C, Bytes>::type;

template <typename C>
inline constexpr int64_t kLanesOf = kVectorBytes / sizeof(C);

template <typename C>
Vector<C> load_vector(const C* data) {
  Vector<C> v;
  std::memcpy(&v, data, sizeof(v));
  return v;
}

template <typename C>
void store_vector(C* data, Vector<C> v) {
  std::memcpy(data, &v, sizeof(v));
}

template <typename C>
Vector<C> broadcast(C value) {
  return Vector<C>{} + value;
}

// The rows a kernel works on next, for row kernels that read and write each row in several
// passes: prefetching the next rows during the arithmetic of one pass overlaps their memory
// traffic with it, which the hardware prefetcher, following only the current row, does not.
template <typename C>
struct NextRows {
  const C* input = nullptr;  // null: there is no next row
  C* output = nullptr;

  // Asks for the cache lines of element i of both next rows (the output's for writing).
  void prefetch(int64_t i) const {
    if (input == nullptr) return;
    __builtin_prefetch(input + i, 0);
    __builtin_prefetch(output + i, 1);
  }
};

// The larger of best and value, or a NaN among them, as PyTorch's max-like kernels keep NaN.
// Written as a select on both comparisons, so that loops of it vectorise rather than branch.
template <typename C>
C max_keeping_nan(C best, C value) {
  return (value > best) | (value != value) ? value : best;
}

// A step of 1 known at compile time, for the Step parameters below: loops over it vectorise
// without a check.
inline constexpr std::integral_constant<int64_t, 1> kUnitStep{};

// to[j] = from[j * step] converted to To, for j < count: a contiguous row (16-bit floats
// included) through convert_elements' block loop.
template <typename To, typename From, typename Step>
void convert_row_from(const From* from, Step step, To* to, int64_t count) {
  if (step == 1) {
    convert_elements(from, to, count);
  } else {
    for (int64_t j = 0; j < count; ++j) to[j] = static_cast<To>(from[j * step]);
  }
}

// to[j * step] = from[j] converted to To, for j < count.
template <typename To, typename From, typename Step>
void convert_row_into(const From* from, To* to, Step step, int64_t count) {
  if (step == 1) {
    convert_elements(from, to, count);
  } else {
    for (int64_t j = 0; j < count; ++j) to[j * step] = static_cast<To>(from[j]);
  }
}

// `count` elements of a row, `step` apart, read in C: the row itself where it is C already and
// contiguous, else its conversion into `buffer`, so that kernels' loops along the row run over
// consecutive elements of C.
template <typename C, typename T, typename Step>
const C* row_in_compute_type(const T* row, int64_t count, Step step, C* buffer) {
  if constexpr (std::is_same_v<T, C>) {
    if (step == 1) return row;
  }
  convert_row_from(row, step, buffer, count);
  return buffer;
}

// y[j * step] = value(j) converted to T, for j in [begin, end): 16-bit floats in a row of
// consecutive elements through `buffer` and one convert_elements.
template <typename T, typename C, typename Step, typename ValueFn>
void store_row(T* y, int64_t begin, int64_t end, Step step, C* buffer, ValueFn&& value) {
  if constexpr (kConvertsToCompute<T>) {
    if (step == 1) {
      for (int64_t j = begin; j < end; ++j) buffer[j - begin] = value(j);
      convert_elements(buffer, y + begin, end - begin);
      return;
    }
  }
  for (int64_t j = begin; j < end; ++j) y[j * step] = static_cast<T>(value(j));
}

// Calls body(begin, end) over [0, count) in blocks of kPrefetchBlock bytes of C, prefetching
// the same block of `next` before each: a loop in body vectorises as if it ran over all of
// [0, count), and the blocks are long enough to pay for its set-up.
inline constexpr int64_t kPrefetchBlock = 256;

template <typename C, typename Body>
void for_each_block_prefetching(int64_t count, const NextRows<C>& next, Body&& body) {
  constexpr int64_t kBlock = kPrefetchBlock / sizeof(C);
  constexpr int64_t kLine = 64 / sizeof(C);
  for (int64_t begin = 0; begin < count; begin += kBlock) {
    for (int64_t line = 0; line < kBlock; line += kLine) next.prefetch(begin + line);
    body(begin, std::min(count, begin + kBlock));
  }
}

// How far ahead of a loop streaming through memory its reads are prefetched: one core's
// hardware prefetcher alone keeps too few lines in flight to reach the memory's bandwidth.
inline constexpr int64_t kReadAheadBytes = 4096;
// The stretch of each array that one round of such prefetches covers.
inline constexpr int64_t kReadAheadBlock = 1024;

// Calls body(begin, end) over [0, count) in blocks of kReadAheadBlock bytes of the widest
// array, first prefetching each array's lines kReadAheadBytes beyond the block: for loops that
// stream through arrays in memory. (Prefetching past an array's end is harmless: prefetches
// never fault.) Block boundaries depend only on count.
template <typename Body, typename... T>
void for_each_block_reading_ahead(int64_t count, Body&& body, const T*... arrays) {
  constexpr auto kBlock = static_cast<int64_t>(kReadAheadBlock / std::max({sizeof(T)...}));
  for (int64_t begin = 0; begin < count; begin += kBlock) {
    const auto read_ahead = [begin](const auto* array) {
      const char* const block = reinterpret_cast<const char*>(array + begin) + kReadAheadBytes;
      for (int64_t line = 0; line < kReadAheadBlock; line += 64) __builtin_prefetch(block + line);
    };
    (read_ahead(arrays), ...);
    body(begin, std::min(count, begin + kBlock));
  }
}

// Lane types: F is float (one lane) or Vector<float>; LaneBits<F> holds the lanes' bits.
template <typename F>
using LaneBits = std::conditional_t<std::is_same_v<F, float>, uint32_t, Vector<uint32_t>>;
template <typename F>
using SignedLaneBits = std::conditional_t<std::is_same_v<F, float>, int32_t, Vector<int32_t>>;

// `value` in every lane of F.
template <typename F>
F lanes_of(float value) {
  if constexpr (std::is_same_v<F, float>) {
    return value;
  } else {
    return broadcast(value);
  }
}

// e^x for float lanes (F is float or Vector<float>), within 2 ulp of the exact value: inf
// above ln(FLT_MAX), subnormal results down to 2^-149, 0 below, NaN for NaN. Scalar and vector
// lanes compute the same bits.
//
// x = n ln 2 + r with n an integer and |r| <= ln(2)/2; e^r from a degree-6 polynomial (a
// Chebyshev fit on that interval, 2e-9 from e^r); 2^n as two factors 2^(n/2), so that results
// near the bottom of the range round once, like any subnormal.
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
  F p = constant(1.3942159833661436e-3f);
  p = p * r + 8.375968226311425e-3f;
  p = p * r + 4.1666340142225575e-2f;
  p = p * r + 1.6666405302634305e-1f;
  p = p * r + 5.000000050018797e-1f;
  p = p * r + 1.00000004003887f;
  p = p * r + 1.0f;
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
  return in_compute_type(x, [](float v) { return exp_lanes(v); }, [](C v) { return std::exp(v); });
}

// erfc(m / sqrt(2)) for m >= 0 (and NaN) in float lanes, the upper tail of the standard normal
// distribution times 2, with a small relative error down to where it leaves the normal floats
// (m near 13): e^(-m^2 / 2) R(z), z = m / sqrt(2). R(z) = erfc(z) e^(z^2) falls smoothly from 1
// to 0; it is a degree-10 Chebyshev series in u = 2t - 1, t = 1 / (1 + 0.4 z), whose
// coefficients were fitted by weighted least squares in long double against erfcl (4000
// Chebyshev nodes in t, z up to 12) and are within 1.4e-8 of R. The exponent, where rounding
// would be magnified by m^2, is exact: m's top 12 significant bits square without rounding,
// and e^(-m^2 / 2) is their exponential times a short series for the small rest. Past m = 16,
// where the result is 0, m is taken as 16: the rest's series would overflow there (m near 4e8)
// and make the 0 a NaN.
template <typename F>
F erfc_over_sqrt2_lanes(F m) {
  using Bits = LaneBits<F>;
  m = m > 16.0f ? lanes_of<F>(16.0f) : m;  // NaN stays
  const F high = std::bit_cast<F>(std::bit_cast<Bits>(m) & 0xfffff000u);
  const F low = m - high;
  // e^-rest, rest = (m^2 - high^2) / 2 < m^2 / 2^12, by its series to the cube.
  const F rest = low * (m + high) * 0.5f;
  const F rest_exp = 1.0f - rest * (1.0f - rest * (0.5f - rest * (1.0f / 6.0f)));
  const F gaussian = exp_lanes(high * high * -0.5f) * rest_exp;
  const F scaled = m * (0.4f / std::numbers::sqrt2_v<float>);  // 0.4 z
  const F u = (1.0f - scaled) / (1.0f + scaled);                  // 2t - 1, without cancelling
  constexpr float kSeries[] = {3.508628890e-01f,  4.675858924e-01f,  1.446662697e-01f,
                               3.225693213e-02f,  4.537420948e-03f,  1.699486282e-04f,
                               -7.111712022e-05f, -9.723217981e-06f, 1.135456952e-06f,
                               4.251245613e-07f,  -7.165847492e-08f};
  // Clenshaw's recurrence, from the highest coefficient down.
  F next = lanes_of<F>(0.0f), after = lanes_of<F>(0.0f);
  for (int j = 10; j >= 1; --j) {
    const F current = 2.0f * u * next - after + kSeries[j];
    after = next;
    next = current;
  }
  const F far = gaussian * (u * next - after + kSeries[0]);
  // Below m = 0.7 (z = 0.49), 1 - erf(z) from erf's Taylor series to z^13 (the first term left
  // out is under 1e-9): it needs no exponential, and the series above loses accuracy near u = 1.
  const F z = m * (1.0f / std::numbers::sqrt2_v<float>);
  const F square = z * z;
  F series = lanes_of<F>(1.0f / 9360.0f);
  series = series * square - 1.0f / 1320.0f;
  series = series * square + 1.0f / 216.0f;
  series = series * square - 1.0f / 42.0f;
  series = series * square + 1.0f / 10.0f;
  series = series * square - 1.0f / 3.0f;
  series = series * square + 1.0f;
  const F near = 1.0f - (2.0f * std::numbers::inv_sqrtpi_v<float>) * z * series;
  return m < 0.7f ? near : far;
}

// tanh(x) in the compute type C.
template <typename C>
C tanh_of(C x) {
  return in_compute_type(x, [](float v) { return tanh_lanes(v); }, [](C v) { return std::tanh(v); });
}

// ln(x) in the compute type C.
template <typename C>
C log_of(C x) {
  return in_compute_type(x, [](float v) { return log_lanes(v); }, [](C v) { return std::log(v); });
}

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
