// A schema `Scalar`: a bool, integer or floating-point number whose kind the caller chose.
// The same type serves the public API and plugins; it converts to and from bp_scalar.
#pragma once

#include <backplane/abi.h>
#include <backplane/sdk/dtype.hpp>

#include <cstdint>
#include <type_traits>

namespace bp {

class Scalar {
 public:
  enum class Kind : int32_t { Bool = BP_SCALAR_BOOL, Int = BP_SCALAR_INT, Float = BP_SCALAR_FLOAT };

  Scalar() : Scalar(int64_t{0}) {}
  Scalar(bool v) : kind_(Kind::Bool) { value_.i = v ? 1 : 0; }  // NOLINT: implicit by design
  template <typename T,
            std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  Scalar(T v) : kind_(Kind::Int) {  // NOLINT
    value_.i = static_cast<int64_t>(v);
  }
  template <typename T, std::enable_if_t<std::is_floating_point_v<T>, int> = 0>
  Scalar(T v) : kind_(Kind::Float) {  // NOLINT
    value_.f = static_cast<double>(v);
  }
  explicit Scalar(const bp_scalar& s) {
    switch (s.kind) {
      case BP_SCALAR_BOOL:
        kind_ = Kind::Bool;
        value_.i = s.value.b ? 1 : 0;
        break;
      case BP_SCALAR_INT:
        kind_ = Kind::Int;
        value_.i = s.value.i;
        break;
      default:
        kind_ = Kind::Float;
        value_.f = s.value.f;
        break;
    }
  }

  Kind kind() const { return kind_; }
  bool is_bool() const { return kind_ == Kind::Bool; }
  bool is_integral() const { return kind_ == Kind::Int; }
  bool is_floating_point() const { return kind_ == Kind::Float; }

  // The value converted as a C++ static_cast would.
  template <typename T>
  T to() const {
    if (kind_ == Kind::Float) return static_cast<T>(static_cast<float_like_t<T>>(value_.f));
    return static_cast<T>(static_cast<int_like_t<T>>(value_.i));
  }

  // The dtype PyTorch gives a tensor made from this number alone.
  DType default_dtype() const {
    switch (kind_) {
      case Kind::Bool: return DType::Bool;
      case Kind::Int: return DType::Int64;
      case Kind::Float: return DType::Float32;
    }
    return DType::Float32;
  }

  bp_scalar to_abi() const {
    bp_scalar s{};
    s.kind = static_cast<int32_t>(kind_);
    if (kind_ == Kind::Float) {
      s.value.f = value_.f;
    } else if (kind_ == Kind::Bool) {
      s.value.b = value_.i != 0;
    } else {
      s.value.i = value_.i;
    }
    return s;
  }

 private:
  // Half and BFloat16 convert through float; everything else converts directly.
  template <typename T>
  using float_like_t = std::conditional_t<std::is_arithmetic_v<T>, double, float>;
  template <typename T>
  using int_like_t = std::conditional_t<std::is_arithmetic_v<T>, int64_t, float>;

  Kind kind_ = Kind::Int;
  union {
    int64_t i;
    double f;
  } value_{};
};

}  // namespace bp
