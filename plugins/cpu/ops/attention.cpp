// _scaled_dot_product_fused_attention: softmax(query @ key^T * scale) @ value over the last two
// dims, for every index of the leading ones, without the (L, S) score matrix (attention.h).
// scaled_dot_product_attention calls it when there is no mask.
#include "CPUNativeFunctions.h"

#include "kernels/attention.h"
#include "kernels/strided_loop.h"

#include <cmath>
#include <cstdint>
#include <optional>
#include <string_view>

namespace bp::cpu {

void _scaled_dot_product_fused_attention_out(const TensorView& query, const TensorView& key,
                                             const TensorView& value, bool is_causal,
                                             std::optional<double> scale, const TensorView& out) {
  constexpr std::string_view op = "_scaled_dot_product_fused_attention";
  for (const TensorView* view : {&key, &value, &out})
    require_dtype(op, "every operand", *view, query.dtype());
  const int64_t dims = query.dim();
  const attention::Problem problem{
      query.size(dims - 2),
      key.size(dims - 2),
      query.size(dims - 1),
      value.size(dims - 1),
      is_causal,
      scale.value_or(1.0 / std::sqrt(static_cast<double>(query.size(dims - 1))))};
  int64_t leading = 1;
  for (int64_t d = 0; d < dims - 2; ++d) leading *= query.size(d);
  if (leading == 0 || problem.query_length == 0) return;

  plugin::visit_dtype<kernel_dtypes::_scaled_dot_product_fused_attention_out>(
      out.dtype(), [&](auto tag) {
        attention::attend<typename decltype(tag)::type>(problem, leading, query, key, value, out);
      });
}

}  // namespace bp::cpu
