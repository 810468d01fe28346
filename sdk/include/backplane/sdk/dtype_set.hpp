// Sets of dtypes, and the visitor and refusal a kernel builds from what ops.yaml declares about
// it (<backplane/sdk/kernel_dtypes.h>): a plugin instantiates a kernel for exactly the dtypes
// its op takes, narrows them where the plugin takes fewer, and refuses every other dtype with
// the one message that the core's own check gives too.
#pragma once

#include <backplane/sdk/dispatch.hpp>
#include <backplane/sdk/dtype.hpp>
#include <backplane/sdk/status.hpp>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace bp::plugin {

// A set of dtypes. A structural type, so that a set can be a template argument.
struct DTypeSet {
  uint32_t bits = 0;  // bit i: the dtype whose code (bp_dtype) is i

  constexpr bool contains(DType dtype) const {
    const auto code = static_cast<uint32_t>(dtype);
    return code < 32 && ((bits >> code) & 1u) != 0;
  }
  friend constexpr DTypeSet operator&(DTypeSet a, DTypeSet b) { return {a.bits & b.bits}; }
  friend constexpr DTypeSet operator|(DTypeSet a, DTypeSet b) { return {a.bits | b.bits}; }
  friend constexpr bool operator==(DTypeSet, DTypeSet) = default;
};

constexpr DTypeSet dtype_set(std::initializer_list<DType> dtypes) {
  DTypeSet set;
  for (const DType dtype : dtypes) set.bits |= 1u << static_cast<uint32_t>(dtype);
  return set;
}

// The classes that ops.yaml's `dtypes:` names.
inline constexpr DTypeSet kAllDTypeSet = [] {
  DTypeSet set;
  for (const DType dtype : kAllDTypes) set = set | dtype_set({dtype});
  return set;
}();
inline constexpr DTypeSet kAllButBoolDTypeSet{kAllDTypeSet.bits & ~dtype_set({kBool}).bits};
inline constexpr DTypeSet kFloatingDTypeSet = dtype_set({kFloat32, kFloat64, kFloat16, kBFloat16});

// The dtypes of `set`, in kAllDTypes order.
inline std::vector<DType> dtypes_in(DTypeSet set) {
  std::vector<DType> dtypes;
  for (const DType dtype : kAllDTypes) {
    if (set.contains(dtype)) dtypes.push_back(dtype);
  }
  return dtypes;
}

// The name of a dtype's constant without its `k` ("Float32" for bp::kFloat32): what the
// refusal lists, so that the user can write the conversion it suggests.
constexpr std::string_view dtype_constant_name(DType dtype) {
  switch (dtype) {
    case DType::Float32: return "Float32";
    case DType::Float64: return "Float64";
    case DType::Float16: return "Float16";
    case DType::BFloat16: return "BFloat16";
    case DType::Int8: return "Int8";
    case DType::UInt8: return "UInt8";
    case DType::Int32: return "Int32";
    case DType::Int64: return "Int64";
    case DType::Bool: return "Bool";
  }
  return "?";
}

// "Float32, Float64, Float16 or BFloat16"; "no dtype" for the empty set.
inline std::string describe(DTypeSet set) {
  const std::vector<DType> dtypes = dtypes_in(set);
  if (dtypes.empty()) return "no dtype";
  std::string text;
  for (size_t i = 0; i < dtypes.size(); ++i) {
    if (i > 0) text += i + 1 == dtypes.size() ? " or " : ", ";
    text += dtype_constant_name(dtypes[i]);
  }
  return text;
}

// The message for a tensor `argument` of `op` whose dtype is not in `accepted`: what the op
// takes and the conversion that makes the call work (to Float32 where it is accepted).
// refuse_dtype and the core's check before each kernel both say it.
inline std::string dtype_refusal(std::string_view op, std::string_view argument, DTypeSet accepted,
                                 DType dtype) {
  const std::string given =
      kAllDTypeSet.contains(dtype)
          ? " is " + std::string(dtype_constant_name(dtype))
          : " has the unknown dtype code " + std::to_string(static_cast<int>(dtype));
  std::string text =
      std::string(op) + " takes " + describe(accepted) + ", but " + std::string(argument) + given;
  const std::vector<DType> dtypes = dtypes_in(accepted);
  if (!dtypes.empty()) {
    const DType target = accepted.contains(kFloat32) ? kFloat32 : dtypes.front();
    text += "; convert with .to(bp::k" + std::string(dtype_constant_name(target)) + ")";
  }
  return text;
}

// `Kernel` below is one of the types of bp::plugin::kernel_dtypes: what ops.yaml declares about
// one kernel op (its name, the argument whose dtype is declared, and the dtypes).

// The refusal of a dtype that a kernel does not take (BP_STATUS_UNIMPLEMENTED).
template <typename Kernel>
[[noreturn]] void refuse_dtype(DTypeSet accepted, DType dtype) {
  throw Error(BP_STATUS_UNIMPLEMENTED,
              dtype_refusal(Kernel::op, Kernel::argument, accepted, dtype));
}

// Refuses `dtype` unless the op takes it and so does the plugin (Narrowed): for a plugin that
// picks its kernels by name rather than instantiating a template per dtype.
template <typename Kernel, DTypeSet Narrowed = kAllDTypeSet>
void require_dtype_of(DType dtype) {
  constexpr DTypeSet accepted = Kernel::dtypes & Narrowed;
  if (!accepted.contains(dtype)) refuse_dtype<Kernel>(accepted, dtype);
}

// Calls fn(TypeTag<T>{}), T the storage type of `dtype` (as visit does), when the op takes
// `dtype` and so does the plugin (Narrowed); refuses it otherwise. Only the accepted dtypes
// instantiate fn.
template <typename Kernel, DTypeSet Narrowed = kAllDTypeSet, typename Fn>
decltype(auto) visit_dtype(DType dtype, Fn&& fn) {
  constexpr DTypeSet accepted = Kernel::dtypes & Narrowed;
  switch (dtype) {
    case DType::Float32:
      if constexpr (accepted.contains(DType::Float32)) return fn(TypeTag<float>{});
      break;
    case DType::Float64:
      if constexpr (accepted.contains(DType::Float64)) return fn(TypeTag<double>{});
      break;
    case DType::Float16:
      if constexpr (accepted.contains(DType::Float16)) return fn(TypeTag<Half>{});
      break;
    case DType::BFloat16:
      if constexpr (accepted.contains(DType::BFloat16)) return fn(TypeTag<BFloat16>{});
      break;
    case DType::Int8:
      if constexpr (accepted.contains(DType::Int8)) return fn(TypeTag<int8_t>{});
      break;
    case DType::UInt8:
      if constexpr (accepted.contains(DType::UInt8)) return fn(TypeTag<uint8_t>{});
      break;
    case DType::Int32:
      if constexpr (accepted.contains(DType::Int32)) return fn(TypeTag<int32_t>{});
      break;
    case DType::Int64:
      if constexpr (accepted.contains(DType::Int64)) return fn(TypeTag<int64_t>{});
      break;
    case DType::Bool:
      if constexpr (accepted.contains(DType::Bool)) return fn(TypeTag<bool>{});
      break;
  }
  refuse_dtype<Kernel>(accepted, dtype);
}

}  // namespace bp::plugin
