// Integer arithmetic that wraps around, as two's complement arithmetic (and PyTorch's integer
// tensors) do, for every backend alike: C++ leaves signed overflow undefined, so signed operands
// are computed in their unsigned type, which wraps, and converted back (modulo 2^N since C++20).
// Other types compute as they are; the instructions are the same. constexpr, so that device
// code compiled with relaxed constexpr rules (nvcc's --expt-relaxed-constexpr) can call it too.
#pragma once

#include <functional>
#include <type_traits>

namespace bp::plugin {

// op(x, y) for op std::plus, std::minus or std::multiplies, wrapping for signed integers.
template <typename Op, typename T>
constexpr T wrapping(Op op, T x, T y) {
  if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(op(static_cast<U>(x), static_cast<U>(y)));
  } else {
    return static_cast<T>(op(x, y));
  }
}

}  // namespace bp::plugin
