// Addition, subtraction and multiplication that wrap around for signed integers, as two's
// complement arithmetic (and PyTorch's integer tensors) do: C++ leaves signed overflow undefined,
// so signed operands are computed in their unsigned type, which wraps, and converted back
// (modulo 2^N since C++20). Other types compute as they are; the instructions are the same.
#pragma once

#include <type_traits>

namespace bp::cpu {

template <typename T>
inline constexpr bool kWrapsInUnsigned = std::is_integral_v<T> && std::is_signed_v<T>;

template <typename T>
T wrapping_add(T x, T y) {
  if constexpr (kWrapsInUnsigned<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(x) + static_cast<U>(y));
  } else {
    return x + y;
  }
}

template <typename T>
T wrapping_sub(T x, T y) {
  if constexpr (kWrapsInUnsigned<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(x) - static_cast<U>(y));
  } else {
    return x - y;
  }
}

template <typename T>
T wrapping_mul(T x, T y) {
  if constexpr (kWrapsInUnsigned<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(x) * static_cast<U>(y));
  } else {
    return x * y;
  }
}

}  // namespace bp::cpu
