// float16 and bfloat16 storage types. Arithmetic happens in float: convert, compute, convert
// back (round to nearest even), which is what every backend's reference behaviour is. Half's
// conversions give the bits x86's F16C instructions give (NaNs included), so that
// convert_elements.hpp's use of those instructions changes no result.
#pragma once

#include <bit>
#include <cstdint>

namespace bp {

struct Half {
  uint16_t bits = 0;

  Half() = default;
  Half(float value) : bits(from_float(value)) {}  // NOLINT: implicit like a built-in type
  operator float() const { return to_float(bits); }

  // Both conversions are branch-free (every case is computed, then one is selected), so that
  // compilers vectorise loops that convert arrays.
  static uint16_t from_float(float f) {
    const uint32_t x = std::bit_cast<uint32_t>(f);
    const uint32_t sign = (x >> 16) & 0x8000u;
    const uint32_t abs = x & 0x7fffffffu;
    // Below half's smallest normal (2^-14): adding 0.5 moves the value's bits to where half's
    // subnormal mantissa sits, and the float addition itself rounds to nearest even.
    constexpr uint32_t kHalfBits = uint32_t{126} << 23;
    const uint32_t subnormal =
        std::bit_cast<uint32_t>(std::bit_cast<float>(abs) + std::bit_cast<float>(kHalfBits)) -
        kHalfBits;
    // Normal: rebias the exponent and round the 13 dropped mantissa bits to nearest even.
    const uint32_t normal = (abs - (uint32_t{112} << 23) + 0xfffu + ((abs >> 13) & 1u)) >> 13;
    uint32_t half = abs < (uint32_t{113} << 23) ? subnormal : normal;
    half = abs >= (uint32_t{143} << 23) ? 0x7c00u : half;  // 2^16 and above: inf
    // NaN: quiet, keeping the payload's top 10 bits.
    half = abs > 0x7f800000u ? 0x7e00u | ((abs >> 13) & 0x3ffu) : half;
    return static_cast<uint16_t>(sign | half);
  }

  static float to_float(uint16_t h) {
    const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
    const uint32_t shifted = static_cast<uint32_t>(h & 0x7fffu) << 13;
    const uint32_t exponent = shifted & (uint32_t{0x1f} << 23);
    const uint32_t normal = shifted + (uint32_t{112} << 23);  // rebiased from 15 to 127
    // inf, or NaN made quiet (a signalling NaN's payload kept).
    const uint32_t inf_or_nan =
        (normal + (uint32_t{112} << 23)) | ((h & 0x3ffu) != 0 ? uint32_t{1} << 22 : 0u);
    // A subnormal's mantissa, given the exponent of 2^-14, is 2^-14 too large by exactly 2^-14.
    constexpr uint32_t kMinNormalBits = uint32_t{113} << 23;
    const uint32_t subnormal = std::bit_cast<uint32_t>(
        std::bit_cast<float>(normal + (uint32_t{1} << 23)) - std::bit_cast<float>(kMinNormalBits));
    const uint32_t magnitude = exponent == (uint32_t{0x1f} << 23) ? inf_or_nan
                               : exponent == 0                    ? subnormal
                                                                  : normal;
    return std::bit_cast<float>(sign | magnitude);
  }
};

struct BFloat16 {
  uint16_t bits = 0;

  BFloat16() = default;
  BFloat16(float value) : bits(from_float(value)) {}  // NOLINT: implicit like a built-in type
  operator float() const { return to_float(bits); }

  // Branch-free, like Half's.
  static uint16_t from_float(float f) {
    const uint32_t x = std::bit_cast<uint32_t>(f);
    const uint32_t rounded = (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;  // to nearest even
    const uint32_t quiet_nan = (x >> 16) | 0x40u;
    return static_cast<uint16_t>((x & 0x7fffffffu) > 0x7f800000u ? quiet_nan : rounded);
  }

  static float to_float(uint16_t b) { return std::bit_cast<float>(static_cast<uint32_t>(b) << 16); }
};

static_assert(sizeof(Half) == 2 && sizeof(BFloat16) == 2);

}  // namespace bp
