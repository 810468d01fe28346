// Calling a template once per element type: visit(dtype, [&](auto tag) { using T = ...; }).
#pragma once

#include <backplane/sdk/dtype.hpp>
#include <backplane/sdk/half.hpp>
#include <backplane/sdk/status.hpp>

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string>
#include <type_traits>
#include <utility>

namespace bp::plugin {

template <typename T>
struct TypeTag {
  using type = T;
};

// The C++ type that stores one element of each dtype (bool is stored as one byte).
template <DType D>
struct StorageType;
template <>
struct StorageType<DType::Float32> {
  using type = float;
};
template <>
struct StorageType<DType::Float64> {
  using type = double;
};
template <>
struct StorageType<DType::Float16> {
  using type = Half;
};
template <>
struct StorageType<DType::BFloat16> {
  using type = BFloat16;
};
template <>
struct StorageType<DType::Int8> {
  using type = int8_t;
};
template <>
struct StorageType<DType::UInt8> {
  using type = uint8_t;
};
template <>
struct StorageType<DType::Int32> {
  using type = int32_t;
};
template <>
struct StorageType<DType::Int64> {
  using type = int64_t;
};
template <>
struct StorageType<DType::Bool> {
  using type = bool;
};

namespace dispatch_detail {

template <typename T, size_t... I>
constexpr int dtype_index_storing(std::index_sequence<I...>) {
  int index = -1;
  ((index =
        std::is_same_v<T, typename StorageType<kAllDTypes[I]>::type> ? static_cast<int>(I) : index),
   ...);
  return index;
}

}  // namespace dispatch_detail

// The dtype whose elements T (const or not) stores: StorageType's inverse.
template <typename T>
inline constexpr DType kDTypeOf = [] {
  constexpr int index = dispatch_detail::dtype_index_storing<std::remove_const_t<T>>(
      std::make_index_sequence<std::size(kAllDTypes)>{});
  static_assert(index >= 0, "T is the storage type of no dtype");
  return kAllDTypes[index];
}();

// The type arithmetic on T happens in: float for the 16-bit floats, T otherwise.
template <typename T>
struct ComputeType {
  using type = T;
};
template <>
struct ComputeType<Half> {
  using type = float;
};
template <>
struct ComputeType<BFloat16> {
  using type = float;
};
template <typename T>
using compute_t = typename ComputeType<T>::type;

// Calls fn(TypeTag<T>{}) with T the storage type of `dtype`.
template <typename Fn>
decltype(auto) visit(DType dtype, Fn&& fn) {
  switch (dtype) {
    case DType::Float32: return fn(TypeTag<float>{});
    case DType::Float64: return fn(TypeTag<double>{});
    case DType::Float16: return fn(TypeTag<Half>{});
    case DType::BFloat16: return fn(TypeTag<BFloat16>{});
    case DType::Int8: return fn(TypeTag<int8_t>{});
    case DType::UInt8: return fn(TypeTag<uint8_t>{});
    case DType::Int32: return fn(TypeTag<int32_t>{});
    case DType::Int64: return fn(TypeTag<int64_t>{});
    case DType::Bool: return fn(TypeTag<bool>{});
  }
  throw Error(BP_STATUS_UNIMPLEMENTED,
              "unknown dtype code " + std::to_string(static_cast<int>(dtype)));
}

}  // namespace bp::plugin
