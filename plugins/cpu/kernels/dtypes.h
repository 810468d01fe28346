// Which element types a kernel accepts, and the refusal of the others.
#pragma once

#include "kernels/strided_loop.h"

#include <backplane/sdk/plugin.hpp>

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

}  // namespace bp::cpu
