// Integer arithmetic that reports overflow instead of wrapping around: for sizes, offsets and
// window extents computed from arguments a caller chose, where a wrapped result would size an
// output or place a read wrongly. The result is exact or absent, never approximate.
// constexpr, so that tables of sizes may be checked at compile time too.
#pragma once

#include <concepts>
#include <optional>

namespace bp::plugin {

// x + y, x - y and x * y, or std::nullopt where the exact result does not fit in T.
template <std::integral T>
constexpr std::optional<T> checked_add(T x, T y) {
  T result;
  if (__builtin_add_overflow(x, y, &result)) return std::nullopt;
  return result;
}

template <std::integral T>
constexpr std::optional<T> checked_sub(T x, T y) {
  T result;
  if (__builtin_sub_overflow(x, y, &result)) return std::nullopt;
  return result;
}

template <std::integral T>
constexpr std::optional<T> checked_mul(T x, T y) {
  T result;
  if (__builtin_mul_overflow(x, y, &result)) return std::nullopt;
  return result;
}

}  // namespace bp::plugin
