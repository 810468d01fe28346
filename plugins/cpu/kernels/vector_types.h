// GCC's vector extensions, for the loops that GCC does not vectorise by itself: Vector<C> is
// 32 bytes of C operated on lane by lane (+, *, comparisons, ?:), which the AVX2 copy of a
// multiversioned kernel (multiversion.h) runs as single instructions and the baseline copy as
// pairs of SSE ones; loads, stores and broadcasts of them; and lane types for code written once
// for one float and for a Vector<float> of them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace bp::cpu {

// The widest vector every multiversioned copy handles well.
inline constexpr size_t kVectorBytes = 32;

// The vector for loops whose work is comparing and selecting: the baseline copy takes 32-byte
// comparisons and selects apart lane by lane, slower than scalar code, while 16-byte ones are
// SSE2 instructions in both copies.
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

}  // namespace bp::cpu
