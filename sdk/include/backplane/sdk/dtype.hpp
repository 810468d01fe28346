// Element types, shared by the core and by plugins. Header-only over abi.h.
#pragma once

#include <backplane/abi.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace bp {

enum class DType : int32_t {
  Float32 = BP_DTYPE_FLOAT32,
  Float64 = BP_DTYPE_FLOAT64,
  Float16 = BP_DTYPE_FLOAT16,
  BFloat16 = BP_DTYPE_BFLOAT16,
  Int8 = BP_DTYPE_INT8,
  UInt8 = BP_DTYPE_UINT8,
  Int32 = BP_DTYPE_INT32,
  Int64 = BP_DTYPE_INT64,
  Bool = BP_DTYPE_BOOL,
};

inline constexpr DType kFloat32 = DType::Float32;
inline constexpr DType kFloat64 = DType::Float64;
inline constexpr DType kFloat16 = DType::Float16;
inline constexpr DType kBFloat16 = DType::BFloat16;
inline constexpr DType kInt8 = DType::Int8;
inline constexpr DType kUInt8 = DType::UInt8;
inline constexpr DType kInt32 = DType::Int32;
inline constexpr DType kInt64 = DType::Int64;
inline constexpr DType kBool = DType::Bool;

inline constexpr DType kAllDTypes[] = {kFloat32, kFloat64, kFloat16, kBFloat16, kInt8,
                                       kUInt8,   kInt32,   kInt64,   kBool};

constexpr std::size_t element_size(DType t) {
  switch (t) {
    case DType::Float64:
    case DType::Int64: return 8;
    case DType::Float32:
    case DType::Int32: return 4;
    case DType::Float16:
    case DType::BFloat16: return 2;
    case DType::Int8:
    case DType::UInt8:
    case DType::Bool: return 1;
  }
  return 0;
}

constexpr bool is_floating_point(DType t) {
  return t == DType::Float32 || t == DType::Float64 || t == DType::Float16 || t == DType::BFloat16;
}

constexpr bool is_integral(DType t, bool include_bool) {
  return t == DType::Int8 || t == DType::UInt8 || t == DType::Int32 || t == DType::Int64 ||
         (include_bool && t == DType::Bool);
}

// Whether every value of `from` is exactly a value of `to`, of the same kind of number: an
// integer or Bool dtype into Int64, a floating dtype into a wider one. sum and mean read such
// an input as it is, rather than converted to their output's dtype first.
constexpr bool widens_exactly(DType from, DType to) {
  if (from == to) return true;
  if (to == DType::Int64) return is_integral(from, /*include_bool=*/true);
  const bool half_width = from == DType::Float16 || from == DType::BFloat16;
  if (to == DType::Float64) return half_width || from == DType::Float32;
  if (to == DType::Float32) return half_width;
  return false;
}

// PyTorch's names, which error messages use: "Float", "Long", ...
constexpr std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::Float32: return "Float";
    case DType::Float64: return "Double";
    case DType::Float16: return "Half";
    case DType::BFloat16: return "BFloat16";
    case DType::Int8: return "Char";
    case DType::UInt8: return "Byte";
    case DType::Int32: return "Int";
    case DType::Int64: return "Long";
    case DType::Bool: return "Bool";
  }
  return "?";
}

constexpr DLDataType to_dlpack(DType t) {
  switch (t) {
    case DType::Float32: return {kDLFloat, 32, 1};
    case DType::Float64: return {kDLFloat, 64, 1};
    case DType::Float16: return {kDLFloat, 16, 1};
    case DType::BFloat16: return {kDLBfloat, 16, 1};
    case DType::Int8: return {kDLInt, 8, 1};
    case DType::UInt8: return {kDLUInt, 8, 1};
    case DType::Int32: return {kDLInt, 32, 1};
    case DType::Int64: return {kDLInt, 64, 1};
    case DType::Bool: return {BP_DL_BOOL_CODE, 8, 1};
  }
  return {kDLFloat, 32, 1};
}

// The DType a DLDataType names, or nullopt for a type Backplane does not have.
constexpr std::optional<DType> from_dlpack(DLDataType t) {
  if (t.lanes != 1) return std::nullopt;
  for (DType d : kAllDTypes) {
    DLDataType candidate = to_dlpack(d);
    if (candidate.code == t.code && candidate.bits == t.bits) return d;
  }
  return std::nullopt;
}

}  // namespace bp
