// The C++ element type that stores each dtype, in the direction the core needs it: from a
// C++ type (from_vector<T>, to_vector<T>) to its dtype.
#pragma once

#include <backplane/sdk/dtype.hpp>
#include <backplane/sdk/half.hpp>

#include <cstdint>
#include <string_view>

namespace bp::detail {

// Defined only for the nine element types, so that any other T fails to compile.
template <typename T>
struct DTypeOf;
// clang-format off
template <> struct DTypeOf<float> { static constexpr DType value = kFloat32; };
template <> struct DTypeOf<double> { static constexpr DType value = kFloat64; };
template <> struct DTypeOf<Half> { static constexpr DType value = kFloat16; };
template <> struct DTypeOf<BFloat16> { static constexpr DType value = kBFloat16; };
template <> struct DTypeOf<int8_t> { static constexpr DType value = kInt8; };
template <> struct DTypeOf<uint8_t> { static constexpr DType value = kUInt8; };
template <> struct DTypeOf<int32_t> { static constexpr DType value = kInt32; };
template <> struct DTypeOf<int64_t> { static constexpr DType value = kInt64; };
template <> struct DTypeOf<bool> { static constexpr DType value = kBool; };
// clang-format on

template <typename T>
constexpr DType dtype_of() {
  return DTypeOf<T>::value;
}

// The C++ spelling of each dtype's element type, for messages about template arguments.
constexpr std::string_view element_type_name(DType t) {
  switch (t) {
    case DType::Float32: return "float";
    case DType::Float64: return "double";
    case DType::Float16: return "bp::Half";
    case DType::BFloat16: return "bp::BFloat16";
    case DType::Int8: return "int8_t";
    case DType::UInt8: return "uint8_t";
    case DType::Int32: return "int32_t";
    case DType::Int64: return "int64_t";
    case DType::Bool: return "bool";
  }
  return "?";
}

// How code names each dtype: "bp::kFloat32".
constexpr std::string_view dtype_constant_name(DType t) {
  switch (t) {
    case DType::Float32: return "bp::kFloat32";
    case DType::Float64: return "bp::kFloat64";
    case DType::Float16: return "bp::kFloat16";
    case DType::BFloat16: return "bp::kBFloat16";
    case DType::Int8: return "bp::kInt8";
    case DType::UInt8: return "bp::kUInt8";
    case DType::Int32: return "bp::kInt32";
    case DType::Int64: return "bp::kInt64";
    case DType::Bool: return "bp::kBool";
  }
  return "?";
}

}  // namespace bp::detail
