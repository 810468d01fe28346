// Half's and BFloat16's conversions against IEEE 754's definition, for every 16-bit value and
// for floats on both sides of every rounding boundary; and convert_elements, which uses
// conversion instructions where the processor has them, against those conversions bit for bit.
#include <backplane/sdk/convert_elements.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace {

using bp::Half;
using bp::plugin::convert_elements;

constexpr uint32_t kHalves = 1u << 16;
constexpr uint16_t kHalfInfinity = 0x7c00;

bool is_half_nan(uint16_t h) { return (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0; }

// A half's value from its fields: (-1)^sign * mantissa * 2^(exponent - 25) for normals, with
// the implicit bit; subnormals have exponent 1 and no implicit bit.
double half_value(uint16_t h) {
  const int exponent = (h >> 10) & 0x1f;
  const int mantissa = h & 0x3ff;
  const double sign = (h & 0x8000u) != 0 ? -1.0 : 1.0;
  if (exponent == 0x1f) return sign * INFINITY;
  if (exponent == 0) return sign * std::ldexp(mantissa, -24);
  return sign * std::ldexp(mantissa + 1024, exponent - 25);
}

// The half nearest to x (ties to the even mantissa); |x| of 65520 (half-way between the largest
// half and 2^16) and above round to infinity. NaN: quiet, keeping the top 10 payload bits.
uint16_t nearest_half(float x) {
  const uint32_t bits = std::bit_cast<uint32_t>(x);
  const auto sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  if (std::isnan(x)) return sign | 0x7e00u | ((bits >> 13) & 0x3ffu);
  const double magnitude = std::fabs(static_cast<double>(x));
  if (magnitude >= 65520.0) return sign | kHalfInfinity;
  // Positive halves are ordered like their bits: the last one not above x, then its successor.
  uint16_t low = 0, high = 0x7bff;
  while (low < high) {
    const auto middle = static_cast<uint16_t>((low + high + 1) / 2);
    if (half_value(middle) <= magnitude) {
      low = middle;
    } else {
      high = static_cast<uint16_t>(middle - 1);
    }
  }
  if (low == 0x7bff) return sign | low;  // below 65520: the largest half is the nearest
  const double below = magnitude - half_value(low);
  const double above = half_value(static_cast<uint16_t>(low + 1)) - magnitude;
  const bool round_up = above < below || (above == below && (low & 1u) != 0);
  return sign | static_cast<uint16_t>(low + (round_up ? 1 : 0));
}

// Floats that make rounding decisions: each half's value, and the midpoint to the next half,
// each with its neighbouring floats; plus a sweep through all float bit patterns.
std::vector<float> rounding_probes() {
  std::vector<float> probes;
  const auto with_neighbours = [&](double value) {
    const auto f = static_cast<float>(value);
    for (float probe : {std::nextafter(f, -INFINITY), f, std::nextafter(f, INFINITY)}) {
      probes.push_back(probe);
      probes.push_back(-probe);
    }
  };
  for (uint16_t h = 0; h < 0x7c00; ++h) {
    with_neighbours(half_value(h));
    with_neighbours((half_value(h) + (h == 0x7bff ? 65536.0 : half_value(h + 1))) / 2);
  }
  for (uint64_t bits = 0; bits < (uint64_t{1} << 32); bits += 4099) {
    probes.push_back(std::bit_cast<float>(static_cast<uint32_t>(bits)));
  }
  for (uint32_t payload : {1u, 0x1fffu, 0x2000u, 0x3fffffu, 0x400000u, 0x7fffffu}) {
    probes.push_back(std::bit_cast<float>(0x7f800000u | payload));
    probes.push_back(std::bit_cast<float>(0xff800000u | payload));
  }
  return probes;
}

std::vector<Half> every_half() {
  std::vector<Half> halves(kHalves);
  for (uint32_t h = 0; h < kHalves; ++h) halves[h].bits = static_cast<uint16_t>(h);
  return halves;
}

TEST_CASE("Half to float is exact for every half, and NaNs come out quiet with their payload") {
  for (uint32_t h = 0; h < kHalves; ++h) {
    const auto half_bits = static_cast<uint16_t>(h);
    const float value = Half::to_float(half_bits);
    const uint32_t bits = std::bit_cast<uint32_t>(value);
    CAPTURE(h);
    if (is_half_nan(half_bits)) {
      CHECK(std::isnan(value));
      CHECK((bits >> 31) == (h >> 15));
      CHECK((bits & 0x400000u) != 0);                  // quiet
      CHECK(((bits >> 13) & 0x1ffu) == (h & 0x1ffu));  // the rest of the payload
    } else {
      CHECK(static_cast<double>(value) == half_value(half_bits));  // zeros keep their sign too
      CHECK(std::signbit(value) == ((h & 0x8000u) != 0));
    }
  }
}

TEST_CASE("float to Half rounds to the nearest half, ties to even, overflow to infinity") {
  for (const float x : rounding_probes()) {
    CAPTURE(x);
    CAPTURE(std::bit_cast<uint32_t>(x));
    CHECK(Half::from_float(x) == nearest_half(x));
  }
  CHECK(Half::from_float(65519.996f) == 0x7bff);
  CHECK(Half::from_float(65520.0f) == kHalfInfinity);
  CHECK(Half::from_float(std::ldexp(1.0f, -25)) == 0);  // half of the smallest subnormal
  CHECK(Half::from_float(std::ldexp(1.5f, -25)) == 1);
  CHECK(Half::from_float(-std::ldexp(3.0f, -25)) == 0x8002);  // a tie: to the even mantissa
}

// The bfloat16 nearest to x (ties to the even mantissa): of the two bfloat16 values around x,
// the float with x's low 16 bits cleared and the next one away from zero (2^128, infinity, past
// the largest). NaN: quiet, keeping the top 7 payload bits.
uint16_t nearest_bfloat16(float x) {
  const uint32_t bits = std::bit_cast<uint32_t>(x);
  if (std::isnan(x)) return static_cast<uint16_t>((bits >> 16) | 0x40u);
  if (std::isinf(x)) return static_cast<uint16_t>(bits >> 16);
  const uint32_t toward_zero = bits & 0xffff0000u;
  const double magnitude = std::fabs(static_cast<double>(x));
  const double below =
      magnitude - std::fabs(static_cast<double>(std::bit_cast<float>(toward_zero)));
  const uint32_t away = toward_zero + 0x10000u;
  const double away_magnitude = (away & 0x7fffffffu) == 0x7f800000u
                                    ? std::ldexp(1.0, 128)
                                    : std::fabs(static_cast<double>(std::bit_cast<float>(away)));
  const double above = away_magnitude - magnitude;
  const bool round_away = above < below || (above == below && (toward_zero & 0x10000u) != 0);
  return static_cast<uint16_t>((round_away ? away : toward_zero) >> 16);
}

TEST_CASE("float to BFloat16 rounds to the nearest bfloat16, ties to even, overflow to infinity") {
  std::vector<float> probes;
  for (uint32_t b = 0; b < kHalves; ++b) {
    const uint32_t bits = b << 16;
    // Each bfloat16, the midpoint to the next one, and their neighbouring floats.
    for (const uint32_t probe :
         {bits, bits + 1, bits - 1, bits + 0x8000u, bits + 0x7fffu, bits + 0x8001u}) {
      probes.push_back(std::bit_cast<float>(probe));
    }
  }
  for (uint64_t bits = 0; bits < (uint64_t{1} << 32); bits += 4099) {
    probes.push_back(std::bit_cast<float>(static_cast<uint32_t>(bits)));
  }
  for (const float x : probes) {
    CAPTURE(std::bit_cast<uint32_t>(x));
    CHECK(bp::BFloat16::from_float(x) == nearest_bfloat16(x));
  }
  CHECK(bp::BFloat16::from_float(std::bit_cast<float>(0x7f7f8000u)) == 0x7f80);  // a tie: to inf
  CHECK(bp::BFloat16::from_float(std::bit_cast<float>(0x7f7f7fffu)) == 0x7f7f);
  for (uint32_t b = 0; b < kHalves; ++b) {
    const float value = bp::BFloat16::to_float(static_cast<uint16_t>(b));
    CHECK(std::bit_cast<uint32_t>(value) == b << 16);  // widening is exact, NaN payloads too
  }
}

TEST_CASE("convert_elements gives the bits of element-by-element conversions") {
  const std::string how =
      bp::plugin::converts_half_in_hardware() ? "used" : "absent, portable code used";
  MESSAGE("half <-> float conversion instructions: " << how);

  SUBCASE("every half to float") {
    const std::vector<Half> halves = every_half();
    std::vector<float> floats(kHalves);
    convert_elements(halves.data(), floats.data(), kHalves);
    for (uint32_t h = 0; h < kHalves; ++h) {
      CAPTURE(h);
      CHECK(std::bit_cast<uint32_t>(floats[h]) ==
            std::bit_cast<uint32_t>(static_cast<float>(halves[h])));
    }
  }

  SUBCASE("floats at every rounding boundary to Half") {
    const std::vector<float> probes = rounding_probes();
    std::vector<Half> halves(probes.size());
    convert_elements(probes.data(), halves.data(), static_cast<int64_t>(probes.size()));
    for (size_t i = 0; i < probes.size(); ++i) {
      CAPTURE(probes[i]);
      CHECK(halves[i].bits == Half::from_float(probes[i]));
    }
  }

  SUBCASE("any count and alignment: whole vectors, then the rest one by one") {
    std::vector<float> source(40);
    for (size_t i = 0; i < source.size(); ++i) source[i] = 0.37f * static_cast<float>(i) - 5.0f;
    for (int64_t offset = 0; offset < 3; ++offset) {
      for (int64_t count = 0; count <= 19; ++count) {
        CAPTURE(offset);
        CAPTURE(count);
        std::vector<Half> halves(source.size(), Half(-1.0f));
        std::vector<float> back(source.size(), -1.0f);
        convert_elements(source.data() + offset, halves.data() + offset, count);
        convert_elements(halves.data() + offset, back.data() + offset, count);
        for (int64_t i = 0; i < static_cast<int64_t>(source.size()); ++i) {
          const bool converted = i >= offset && i < offset + count;
          CHECK(halves[i].bits == (converted ? Half::from_float(source[i]) : Half(-1.0f).bits));
          CHECK(back[i] == (converted ? static_cast<float>(Half(source[i])) : -1.0f));
        }
      }
    }
  }

  SUBCASE("other pairs of types convert as static_cast does") {
    const int32_t integers[] = {-3, 0, 7, 65519, 70000};
    Half halves[5];
    convert_elements(integers, halves, 5);
    for (int i = 0; i < 5; ++i) CHECK(halves[i].bits == Half(static_cast<float>(integers[i])).bits);
    const bp::BFloat16 brains[] = {bp::BFloat16(1.5f), bp::BFloat16(-0.25f)};
    double doubles[2];
    convert_elements(brains, doubles, 2);
    CHECK(doubles[0] == 1.5);
    CHECK(doubles[1] == -0.25);
  }
}

}  // namespace
