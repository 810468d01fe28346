// Arithmetic that wraps around for signed integers, as two's complement arithmetic (and
// PyTorch's integer tensors) do: C++ leaves signed overflow undefined, so signed operands are
// computed in their unsigned type, which wraps, and converted back (modulo 2^N since C++20).
// Other types compute as they are; the instructions are the same.
#pragma once

#include <functional>
#include <type_traits>

namespace bp::cpu {

// op(x, y) for op std::plus, std::minus or std::multiplies, wrapping for signed integers.
template <typename Op, typename T>
T wrapping(Op op, T x, T y) {
  if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(op(static_cast<U>(x), static_cast<U>(y)));
  } else {
    return op(x, y);
  }
}

}  // namespace bp::cpu
