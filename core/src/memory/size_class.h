// The sizes the caching allocator hands out. Requests round up to one of four classes per
// power of two, so a freed block fits later requests of nearby sizes while wasting under a
// quarter of it.
#pragma once

#include <bit>
#include <cstddef>

namespace bp::detail {

// Host blocks start on a cache line, which is also what SIMD loads want; every class is a
// multiple of it, as aligned_alloc requires.
inline constexpr size_t kHostAlignment = 64;
inline constexpr size_t kSmallestSizeClass = 512;

constexpr size_t size_class(size_t nbytes) {
  if (nbytes <= kSmallestSizeClass) return kSmallestSizeClass;
  const size_t step = std::bit_floor(nbytes) / 4;
  return (nbytes + step - 1) / step * step;
}

// Dense numbering of the classes from 0 (kSmallestSizeClass) upwards, for tables indexed by
// class. `size` must be a class that size_class returns.
constexpr size_t size_class_index(size_t size) {
  const size_t power = std::bit_floor(size);
  const size_t classes_below =
      static_cast<size_t>(std::countr_zero(power) - std::countr_zero(kSmallestSizeClass)) * 4;
  return classes_below + (size - power) / (power / 4);
}

}  // namespace bp::detail
