// Comparisons (Bool results) and where. The meta step has broadcast the inputs to out's shape
// and given the compared inputs one dtype.
#include "CPUNativeFunctions.h"

#include "dtypes.h"
#include "parallel_elements.h"

#include <string_view>

namespace bp::cpu {
namespace {

// out = fn(self, other), with fn comparing in the compute type (NaN compares false).
template <typename Fn>
void compare(std::string_view op, const TensorView& self, const TensorView& other,
             const TensorView& out, Fn&& fn) {
  require_dtype(op, "other", other, self.dtype());
  require_dtype(op, "out", out, kBool);
  plugin::visit(self.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    parallel_map_elements(out.sizes(), fn, output_operand<bool>(out), input_operand<T>(self),
                          input_operand<T>(other));
  });
}

}  // namespace

void eq_Tensor_out(const TensorView& self, const TensorView& other, const TensorView& out) {
  compare("eq", self, other, out, [](auto x, auto y) { return x == y; });
}

void lt_Tensor_out(const TensorView& self, const TensorView& other, const TensorView& out) {
  compare("lt", self, other, out, [](auto x, auto y) { return x < y; });
}

void gt_Tensor_out(const TensorView& self, const TensorView& other, const TensorView& out) {
  compare("gt", self, other, out, [](auto x, auto y) { return x > y; });
}

void where_self_out(const TensorView& condition, const TensorView& self, const TensorView& other,
                    const TensorView& out) {
  require_dtype("where", "condition", condition, kBool);
  require_dtype("where", "self", self, out.dtype());
  require_dtype("where", "other", other, out.dtype());
  plugin::visit(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    parallel_map_elements(
        out.sizes(), [](bool pick_self, auto x, auto y) { return pick_self ? x : y; },
        output_operand<T>(out), input_operand<bool>(condition), input_operand<T>(self),
        input_operand<T>(other));
  });
}

}  // namespace bp::cpu
