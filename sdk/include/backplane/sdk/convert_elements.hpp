// Arrays of elements converted from one storage type to another, as kernels read float16 and
// bfloat16 in float and store float results back. Half <-> float runs on the processor's
// conversion instructions where it has them (x86's F16C: 8 elements per instruction, where
// the portable code takes a dozen integer operations per vector of them); the bits are the
// same either way (half.hpp follows the instructions' rules).
#pragma once

#include <backplane/sdk/half.hpp>

#include <cstdint>
#include <cstring>
#include <type_traits>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define BP_SDK_F16C_CONVERSIONS 1
#endif

namespace bp::plugin {

namespace convert_detail {

#ifdef BP_SDK_F16C_CONVERSIONS
// Compiled for F16C whatever the including file's target is; called only where
// converts_half_in_hardware. A last part vector is converted through a whole vector's buffer.
__attribute__((target("avx,f16c"))) inline void half_to_float_f16c(const Half* from, float* to,
                                                                   int64_t count) {
  const int64_t whole = count - count % 8;
  for (int64_t i = 0; i < whole; i += 8) {
    const __m128i halves = _mm_loadu_si128(reinterpret_cast<const __m128i*>(from + i));
    _mm256_storeu_ps(to + i, _mm256_cvtph_ps(halves));
  }
  if (whole == count) return;
  Half part[8] = {};
  float converted[8];
  std::memcpy(part, from + whole, (count - whole) * sizeof(Half));
  _mm256_storeu_ps(converted, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<__m128i*>(part))));
  std::memcpy(to + whole, converted, (count - whole) * sizeof(float));
}

__attribute__((target("avx,f16c"))) inline void float_to_half_f16c(const float* from, Half* to,
                                                                   int64_t count) {
  const int64_t whole = count - count % 8;
  for (int64_t i = 0; i < whole; i += 8) {
    const __m128i halves = _mm256_cvtps_ph(_mm256_loadu_ps(from + i), _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(to + i), halves);
  }
  if (whole == count) return;
  float part[8] = {};
  Half converted[8];
  std::memcpy(part, from + whole, (count - whole) * sizeof(float));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(converted),
                   _mm256_cvtps_ph(_mm256_loadu_ps(part), _MM_FROUND_TO_NEAREST_INT));
  std::memcpy(to + whole, converted, (count - whole) * sizeof(Half));
}
#endif

}  // namespace convert_detail

// Whether convert_elements runs Half <-> float on conversion instructions on this processor.
// Asked once: the answer cannot change while the process runs.
inline bool converts_half_in_hardware() {
#ifdef BP_SDK_F16C_CONVERSIONS
  static const bool has = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx") && __builtin_cpu_supports("f16c");
  }();
  return has;
#else
  return false;
#endif
}

// Whether a kernel reading T in its compute type does better converting a block first with
// convert_elements than converting each element inside its arithmetic loop: Half, whose
// conversion is one instruction per 8 elements in a block but a dozen integer operations per
// vector inside a loop. (BFloat16's is one shift, cheapest inside the loop.)
template <typename T>
inline constexpr bool kConvertsFasterInBlocks = std::is_same_v<T, Half>;

// to[i] = static_cast<To>(from[i]) for i < count (the arrays do not overlap).
template <typename To, typename From>
void convert_elements(const From* from, To* to, int64_t count) {
#ifdef BP_SDK_F16C_CONVERSIONS
  if constexpr (std::is_same_v<From, Half> && std::is_same_v<To, float>) {
    if (converts_half_in_hardware()) {
      convert_detail::half_to_float_f16c(from, to, count);
      return;
    }
  } else if constexpr (std::is_same_v<From, float> && std::is_same_v<To, Half>) {
    if (converts_half_in_hardware()) {
      convert_detail::float_to_half_f16c(from, to, count);
      return;
    }
  }
#endif
  for (int64_t i = 0; i < count; ++i) to[i] = static_cast<To>(from[i]);
}

}  // namespace bp::plugin
