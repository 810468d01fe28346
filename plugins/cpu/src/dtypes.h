// Which element types a kernel accepts, and the numeric rules (NaN handling) that several
// kernel families share.
#pragma once

#include "strided_loop.h"

#include <backplane/sdk/plugin.hpp>

#include <cmath>
#include <string>
#include <string_view>
#include <type_traits>

namespace bp::cpu {

// Predicates over storage types, for visit_supported.
template <typename T>
struct AnyDType : std::true_type {};
template <typename T>
struct NonBoolDType : std::bool_constant<!std::is_same_v<T, bool>> {};
template <typename T>
struct FloatingDType : std::bool_constant<std::is_floating_point_v<compute_t<T>>> {};

[[noreturn]] inline void unsupported_dtype(std::string_view op, DType dtype) {
  throw Error(BP_STATUS_UNIMPLEMENTED,
              std::string(op) + ": not implemented for '" + std::string(dtype_name(dtype)) + "'");
}

// Calls fn(TypeTag<T>{}) with T the storage type of `dtype` when Supported<T> holds; otherwise
// reports that `op` has no kernel for the dtype. Only supported types are instantiated.
template <template <typename> class Supported, typename Fn>
void visit_supported(std::string_view op, DType dtype, Fn&& fn) {
  plugin::visit(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (Supported<T>::value) {
      fn(tag);
    } else {
      unsupported_dtype(op, dtype);
    }
  });
}

// The dtypes the core's meta step promises, checked as every backend checks them.
using plugin::require_dtype;
using plugin::require_widening_dtype;

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

}  // namespace bp::cpu
