// The dtypes a kernel takes, as ops.yaml declares them (<backplane/sdk/kernel_dtypes.h>): sets
// of dtypes, the visitor that instantiates a kernel for exactly those, a plugin's narrowing of
// them, and the one refusal of every other dtype.
#include <backplane/sdk/plugin.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

namespace {

using bp::DType;
using namespace bp::plugin;

// A kernel op as ops.yaml's generated types describe one, independent of the real ops.yaml.
struct scale_out {
  static constexpr std::string_view op = "scale.out";
  static constexpr std::string_view argument = "out";
  static constexpr DTypeSet dtypes = kAllButBoolDTypeSet;
};

struct smooth_out {
  static constexpr std::string_view op = "smooth.out";
  static constexpr std::string_view argument = "self";
  static constexpr DTypeSet dtypes = kFloatingDTypeSet;
};

constexpr DTypeSet kWideFloats = dtype_set({bp::kFloat32, bp::kFloat64});

// The message and status that `body` throws as an Error.
template <typename Body>
std::pair<bp_status, std::string> error_of(Body&& body) {
  try {
    body();
  } catch (const Error& e) {
    return {e.code(), e.what()};
  }
  return {BP_STATUS_OK, "<no error>"};
}

}  // namespace

TEST_CASE("a DTypeSet holds dtypes by code, and sets combine") {
  constexpr DTypeSet halves = dtype_set({bp::kFloat16, bp::kBFloat16});
  static_assert(halves.contains(bp::kFloat16) && !halves.contains(bp::kFloat32));
  static_assert(halves.bits == ((1u << BP_DTYPE_FLOAT16) | (1u << BP_DTYPE_BFLOAT16)));
  static_assert((halves | kWideFloats) == kFloatingDTypeSet);
  static_assert((halves & kWideFloats) == DTypeSet{});
  static_assert(!DTypeSet{}.contains(bp::kBool));
  CHECK_FALSE(kAllDTypeSet.contains(static_cast<DType>(-1)));
  CHECK_FALSE(kAllDTypeSet.contains(static_cast<DType>(40)));
}

TEST_CASE("the classes of ops.yaml: all, all_but_bool, floating") {
  CHECK(dtypes_in(kAllDTypeSet) ==
        std::vector<DType>(std::begin(bp::kAllDTypes), std::end(bp::kAllDTypes)));
  CHECK(dtypes_in(kAllButBoolDTypeSet) == std::vector<DType>{bp::kFloat32, bp::kFloat64,
                                                             bp::kFloat16, bp::kBFloat16, bp::kInt8,
                                                             bp::kUInt8, bp::kInt32, bp::kInt64});
  CHECK(dtypes_in(kFloatingDTypeSet) ==
        std::vector<DType>{bp::kFloat32, bp::kFloat64, bp::kFloat16, bp::kBFloat16});
}

TEST_CASE("describe lists a set in kAllDTypes order, as the constants are named") {
  CHECK(describe(kFloatingDTypeSet) == "Float32, Float64, Float16 or BFloat16");
  CHECK(describe(dtype_set({bp::kBool, bp::kInt8})) == "Int8 or Bool");
  CHECK(describe(dtype_set({bp::kUInt8})) == "UInt8");
  CHECK(describe(DTypeSet{}) == "no dtype");
}

TEST_CASE("visit_dtype calls the kernel with the storage type of a declared dtype") {
  const auto size_of = [](auto tag) { return sizeof(typename decltype(tag)::type); };
  CHECK(visit_dtype<scale_out>(bp::kInt64, size_of) == 8);
  CHECK(visit_dtype<scale_out>(bp::kBFloat16, size_of) == 2);
  bool visited_half = false;
  visit_dtype<smooth_out>(bp::kFloat16, [&](auto tag) {
    visited_half = std::is_same_v<typename decltype(tag)::type, bp::Half>;
  });
  CHECK(visited_half);
}

TEST_CASE("visit_dtype instantiates the kernel for the declared dtypes only") {
  // Instantiated for an integer or Bool, the static_assert would stop this file compiling.
  const auto floating_only = [](auto tag) {
    using T = typename decltype(tag)::type;
    static_assert(std::is_floating_point_v<compute_t<T>>);
    return true;
  };
  CHECK(visit_dtype<smooth_out>(bp::kFloat64, floating_only));
  CHECK(error_of([&] { visit_dtype<smooth_out>(bp::kInt32, floating_only); }).first ==
        BP_STATUS_UNIMPLEMENTED);
  const auto never_bool = [](auto tag) {
    static_assert(!std::is_same_v<typename decltype(tag)::type, bool>);
  };
  visit_dtype<scale_out>(bp::kUInt8, never_bool);
}

TEST_CASE("a refused dtype names the op, the argument, the dtype, what it takes and what to do") {
  CHECK(error_of([] { visit_dtype<scale_out>(bp::kBool, [](auto) {}); }) ==
        std::pair<bp_status, std::string>{
            BP_STATUS_UNIMPLEMENTED,
            "scale.out takes Float32, Float64, Float16, BFloat16, Int8, UInt8, Int32 or Int64, "
            "but out is Bool; convert with .to(bp::kFloat32)"});
  CHECK(error_of([] { visit_dtype<smooth_out>(bp::kInt64, [](auto) {}); }).second ==
        "smooth.out takes Float32, Float64, Float16 or BFloat16, but self is Int64; convert "
        "with .to(bp::kFloat32)");
  CHECK(error_of([] { visit_dtype<smooth_out>(static_cast<DType>(42), [](auto) {}); }).second ==
        "smooth.out takes Float32, Float64, Float16 or BFloat16, but self has the unknown dtype "
        "code 42; convert with .to(bp::kFloat32)");
}

TEST_CASE("dtype_refusal suggests Float32, or else the first dtype taken") {
  CHECK(dtype_refusal("f.out", "out", dtype_set({bp::kInt32, bp::kInt64}), bp::kFloat16) ==
        "f.out takes Int32 or Int64, but out is Float16; convert with .to(bp::kInt32)");
  CHECK(dtype_refusal("f.out", "out", DTypeSet{}, bp::kFloat16) ==
        "f.out takes no dtype, but out is Float16");
}

TEST_CASE("a plugin narrows the declared dtypes in the same call, with the same refusal") {
  const auto size_of = [](auto tag) { return sizeof(typename decltype(tag)::type); };
  CHECK(visit_dtype<smooth_out, kWideFloats>(bp::kFloat64, size_of) == 8);
  CHECK(error_of([&] { visit_dtype<smooth_out, kWideFloats>(bp::kFloat16, size_of); }) ==
        std::pair<bp_status, std::string>{
            BP_STATUS_UNIMPLEMENTED,
            "smooth.out takes Float32 or Float64, but self is Float16; convert with "
            ".to(bp::kFloat32)"});
  // Narrowing to dtypes the op does not take adds none of them.
  CHECK(error_of([&] {
          visit_dtype<smooth_out, dtype_set({bp::kInt64})>(bp::kInt64, size_of);
        }).second == "smooth.out takes no dtype, but self is Int64");
}

TEST_CASE("require_dtype_of refuses what visit_dtype refuses, without visiting") {
  CHECK_NOTHROW(require_dtype_of<scale_out>(bp::kInt8));
  CHECK_NOTHROW(require_dtype_of<smooth_out, kWideFloats>(bp::kFloat32));
  CHECK(error_of([] { require_dtype_of<scale_out>(bp::kBool); }).first == BP_STATUS_UNIMPLEMENTED);
  CHECK(error_of([] { require_dtype_of<smooth_out, kWideFloats>(bp::kBFloat16); }).second ==
        "smooth.out takes Float32 or Float64, but self is BFloat16; convert with "
        ".to(bp::kFloat32)");
}

TEST_CASE("plugin.hpp brings ops.yaml's declarations, one type per kernel op") {
  using bp::plugin::kernel_dtypes::eq_Tensor_out;
  using bp::plugin::kernel_dtypes::sub_out;
  CHECK(sub_out::op == "sub.out");
  CHECK(sub_out::argument == "out");
  CHECK(sub_out::dtypes == kAllButBoolDTypeSet);
  CHECK(eq_Tensor_out::argument == "self");
  CHECK(error_of([] {
          require_dtype_of<sub_out>(bp::kBool);
        }).second.starts_with("sub.out takes Float32,"));
}
