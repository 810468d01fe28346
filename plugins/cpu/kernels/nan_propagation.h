// NaN in kernels, by PyTorch's rules: a test for it in any element type, maximum and minimum
// that propagate it, and the larger of two values as max-like reductions and pooling keep it.
#pragma once

#include <cmath>
#include <type_traits>

namespace bp::cpu {

template <typename T>
bool is_nan(T value) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::isnan(value);
  } else {
    return false;
  }
}

// PyTorch's maximum and minimum: NaN wins over any number.
template <typename T>
T max_propagating_nan(T a, T b) {
  if (is_nan(a)) return a;
  if (is_nan(b)) return b;
  return a < b ? b : a;
}

template <typename T>
T min_propagating_nan(T a, T b) {
  if (is_nan(a)) return a;
  if (is_nan(b)) return b;
  return b < a ? b : a;
}

// The larger of best and value, or a NaN among them, as PyTorch's max-like kernels keep NaN.
// Written as a select on both comparisons, so that loops of it vectorise rather than branch.
template <typename C>
C max_keeping_nan(C best, C value) {
  return (value > best) | (value != value) ? value : best;
}

}  // namespace bp::cpu
