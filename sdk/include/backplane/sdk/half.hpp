// float16 and bfloat16 storage types. Arithmetic happens in float: convert, compute, convert
// back (round to nearest even), which is what every backend's reference behaviour is.
#pragma once

#include <cstdint>
#include <cstring>

namespace bp {

struct Half {
  uint16_t bits = 0;

  Half() = default;
  Half(float value) : bits(from_float(value)) {}  // NOLINT: implicit like a built-in type
  operator float() const { return to_float(bits); }

  static uint16_t from_float(float f) {
    uint32_t x;
    std::memcpy(&x, &f, 4);
    const uint32_t sign = (x >> 16) & 0x8000u;
    const uint32_t abs = x & 0x7fffffffu;
    if (abs >= 0x7f800000u) {  // inf or NaN
      return static_cast<uint16_t>(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u));
    }
    if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // overflows to inf
    if (abs < 0x38800000u) {  // subnormal or zero in half precision
      if (abs < 0x33000000u) return static_cast<uint16_t>(sign);
      const uint32_t exponent = abs >> 23;
      const uint32_t mantissa = (abs & 0x7fffffu) | 0x800000u;
      const uint32_t shift = 126u - exponent;  // 14..24
      uint32_t half = mantissa >> shift;
      const uint32_t rest = mantissa & ((1u << shift) - 1u);
      const uint32_t halfway = 1u << (shift - 1u);
      if (rest > halfway || (rest == halfway && (half & 1u))) ++half;
      return static_cast<uint16_t>(sign | half);
    }
    uint32_t half = ((abs - 0x38000000u) >> 13);
    const uint32_t rest = abs & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;
    return static_cast<uint16_t>(sign | half);
  }

  static float to_float(uint16_t h) {
    const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
    const uint32_t exponent = (h >> 10) & 0x1fu;
    uint32_t mantissa = h & 0x3ffu;
    uint32_t x;
    if (exponent == 0x1fu) {
      x = sign | 0x7f800000u | (mantissa << 13);
    } else if (exponent != 0) {
      x = sign | ((exponent + 112u) << 23) | (mantissa << 13);
    } else if (mantissa == 0) {
      x = sign;
    } else {  // subnormal: normalise
      uint32_t e = 113;
      while ((mantissa & 0x400u) == 0) {
        mantissa <<= 1;
        --e;
      }
      x = sign | (e << 23) | ((mantissa & 0x3ffu) << 13);
    }
    float f;
    std::memcpy(&f, &x, 4);
    return f;
  }
};

struct BFloat16 {
  uint16_t bits = 0;

  BFloat16() = default;
  BFloat16(float value) : bits(from_float(value)) {}  // NOLINT: implicit like a built-in type
  operator float() const { return to_float(bits); }

  static uint16_t from_float(float f) {
    uint32_t x;
    std::memcpy(&x, &f, 4);
    if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // NaN
    const uint32_t rounding = 0x7fffu + ((x >> 16) & 1u);
    return static_cast<uint16_t>((x + rounding) >> 16);
  }

  static float to_float(uint16_t b) {
    const uint32_t x = static_cast<uint32_t>(b) << 16;
    float f;
    std::memcpy(&f, &x, 4);
    return f;
  }
};

static_assert(sizeof(Half) == 2 && sizeof(BFloat16) == 2);

}  // namespace bp
