// _scaled_dot_product_fused_attention, on the fused kernel of kernels/attention_block.h: the
// layouts the kernel takes, and the leading dims (batch, heads, ...) as one walk over the four
// operands, whatever their strides. A case the kernel does not fuse is refused with
// BP_STATUS_UNIMPLEMENTED, and scaled_dot_product_attention then takes its composite path.
#include "CUDANativeFunctions.h"

#include "runtime/tensor_access.h"

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>

namespace bp::cuda {
namespace {

constexpr std::string_view kOp = "_scaled_dot_product_fused_attention";

// The kernel copies rows in kAttentionRowAlignment-byte vectors: the last dim contiguous, and the
// first element and every stride that moves to another row multiples of that many bytes.
void require_aligned_rows(std::string_view argument, const TensorView& view) {
  const auto element_bytes = static_cast<int64_t>(element_size(view.dtype()));
  const auto alignment = static_cast<int64_t>(kAttentionRowAlignment);
  bool rows_aligned = view.stride(view.dim() - 1) == 1;
  for (int64_t d = 0; rows_aligned && d + 1 < view.dim(); ++d) {
    rows_aligned = view.size(d) == 1 || view.stride(d) * element_bytes % alignment == 0;
  }
  const bool start_aligned =
      reinterpret_cast<uintptr_t>(address_of(view)) % kAttentionRowAlignment == 0;
  if (!rows_aligned || !start_aligned) {
    throw plugin::Error(
        BP_STATUS_UNIMPLEMENTED,
        std::string(kOp) +
            ": the cuda backend fuses operands whose last dim is contiguous and whose " +
            "rows start at multiples of " + std::to_string(kAttentionRowAlignment) + " bytes; " +
            std::string(argument) + " of shape " + plugin::shape_string(view.sizes()) +
            " has strides " + plugin::shape_string(view.strides()) +
            (start_aligned ? "" : " and a first element that is not so aligned"));
  }
}

}  // namespace

// The meta step has checked the shapes (query (..., L, E), key (..., S, E), value (..., S, Ev),
// out (..., L, Ev), the same leading dims) and given all four one floating dtype.
void _scaled_dot_product_fused_attention_out(const TensorView& query, const TensorView& key,
                                             const TensorView& value, bool is_causal,
                                             std::optional<double> scale, const TensorView& out) {
  for (const TensorView* view : {&key, &value, &out})
    require_dtype(kOp, "every operand", *view, query.dtype());
  const int64_t dims = query.dim();
  const int64_t head_dim = query.size(dims - 1);
  if (value.size(dims - 1) != head_dim) {
    throw plugin::Error(BP_STATUS_UNIMPLEMENTED,
                        std::string(kOp) + ": the cuda backend fuses value rows as long as " +
                            "query's, got E = " + std::to_string(head_dim) +
                            " and Ev = " + std::to_string(value.size(dims - 1)));
  }
  require_aligned_rows("query", query);
  require_aligned_rows("key", key);
  require_aligned_rows("value", value);
  require_aligned_rows("out", out);

  // Each index of the leading dims is one group of a single member.
  const auto leading = static_cast<size_t>(dims - 2);
  const GroupShape<kAttentionOperands> batches = group_shape<kAttentionOperands>(
      kOp, query.sizes().first(leading), DimValues<bool>(leading, false),
      {query.strides().first(leading), key.strides().first(leading), value.strides().first(leading),
       out.strides().first(leading)});
  AttentionShape shape;
  shape.batches = batches.groups;
  shape.batch_offsets = batches.kept;
  shape.query_length = query.size(dims - 2);
  shape.key_length = key.size(dims - 2);
  shape.head_dim = head_dim;
  shape.row_strides[kAttentionQuery] = query.stride(dims - 2);
  shape.row_strides[kAttentionKey] = key.stride(dims - 2);
  shape.row_strides[kAttentionValue] = value.stride(dims - 2);
  shape.row_strides[kAttentionOut] = out.stride(dims - 2);
  shape.causal = is_causal;
  const void* data[kAttentionOperands] = {address_of(query), address_of(key), address_of(value),
                                          address_of(out)};
  const OnDevice on(out);
  launch_fused_attention(query.dtype(), shape, data,
                         scale.value_or(1.0 / std::sqrt(static_cast<double>(head_dim))),
                         on.launch_target());
}

}  // namespace bp::cuda
