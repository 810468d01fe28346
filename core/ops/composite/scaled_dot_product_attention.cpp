// scaled_dot_product_attention: the fused kernel op where the device's backend has one and the
// arguments fit it, else PyTorch's math path: softmax(query @ key^T * scale + mask) @ value,
// over matmul, softmax and where. A row whose every position is masked out has no defined
// softmax and comes out as NaN, as in that path.
#include <backplane/backplane.h>

#include "../meta/attention.h"
#include "dispatch/dispatch.h"
#include "tensor/shape.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <optional>

namespace bp {
namespace {

constexpr std::string_view kOp = "scaled_dot_product_attention";

// (..., H, S, E) -> (..., H * groups, S, E), each head repeated `groups` times in a row, so
// that query heads h * groups ... h * groups + groups - 1 attend with key/value head h.
Tensor repeat_heads(const Tensor& t, int64_t groups) {
  DimVector expanded(t.sizes());
  expanded.insert(expanded.size() - 2, groups);
  DimVector merged(t.sizes());
  merged[merged.size() - 3] *= groups;
  return t.unsqueeze(-3).expand(expanded).reshape(merged);
}

// Key and value heads shared by groups of query heads (grouped-query attention).
void share_heads(const Tensor& query, Tensor& key, Tensor& value) {
  const int64_t query_heads = query.dim() >= 3 ? query.size(-3) : 1;
  const int64_t kv_heads = key.dim() >= 3 ? key.size(-3) : 1;
  if (query.dim() < 3 || key.dim() < 3 || value.dim() < 3 || value.size(-3) != kv_heads ||
      kv_heads == 0 || query_heads % kv_heads != 0) {
    throw Error(fmt::format("{}: enable_gqa needs (..., heads, S, E) operands whose key and value "
                            "head count divides the query's, got query {}, key {}, value {}",
                            kOp, detail::format_shape(query.sizes()),
                            detail::format_shape(key.sizes()),
                            detail::format_shape(value.sizes())));
  }
  if (query_heads == kv_heads) return;
  key = repeat_heads(key, query_heads / kv_heads);
  value = repeat_heads(value, query_heads / kv_heads);
}

// The fused kernel op's result, or nothing when the device's backend lacks the op, the
// operands' leading dims differ (the kernel does not broadcast), or the backend answers that
// it does not fuse this case (BP_STATUS_UNIMPLEMENTED, a bp::Error of code NotImplemented).
std::optional<Tensor> fused_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                      bool is_causal, std::optional<double> scale) {
  if (!detail::has_kernel(detail::OpId::_scaled_dot_product_fused_attention_out, query.device())) {
    return std::nullopt;
  }
  if (!meta::same_leading_dims(query, key) || !meta::same_leading_dims(query, value)) {
    return std::nullopt;
  }
  try {
    return _scaled_dot_product_fused_attention(query, key, value, is_causal, scale);
  } catch (const Error& error) {
    if (error.code() != ErrorCode::NotImplemented) throw;
    return std::nullopt;
  }
}

}  // namespace

Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const std::optional<Tensor>& attn_mask, double dropout_p,
                                    bool is_causal, std::optional<double> scale,
                                    bool enable_gqa) {
  meta::check_attention_operands(kOp, query, key, value);
  if (dropout_p != 0.0) {
    throw Error(fmt::format("{}: dropout_p must be 0, got {}; Backplane computes attention for "
                            "inference, without dropout",
                            kOp, dropout_p));
  }
  const bool has_mask = attn_mask && attn_mask->defined();
  if (is_causal && has_mask) {
    throw Error(fmt::format("{}: pass either is_causal=true or attn_mask, not both; fold the "
                            "causal mask into attn_mask to combine them",
                            kOp));
  }
  Tensor keys = key;
  Tensor values = value;
  if (enable_gqa) share_heads(query, keys, values);
  if (!has_mask) {
    if (std::optional<Tensor> fused = fused_attention(query, keys, values, is_causal, scale)) {
      return *fused;
    }
  }

  const double scale_factor = scale.value_or(1.0 / std::sqrt(static_cast<double>(query.size(-1))));
  Tensor scores = matmul(mul(query, scale_factor), keys.transpose(-2, -1));
  const Tensor minus_infinity =
      full({}, -std::numeric_limits<double>::infinity(), scores.dtype(), scores.device());
  if (is_causal) {
    // Query position i attends to key positions 0..i (the mask is aligned top-left).
    const int64_t target = query.size(-2);
    const int64_t source = keys.size(-2);
    const Tensor future = gt(arange(source, kInt64, scores.device()).view({1, source}),
                             arange(target, kInt64, scores.device()).view({target, 1}));
    scores = where(future, minus_infinity, scores);
  } else if (has_mask) {
    if (attn_mask->dtype() == kBool) {
      scores = where(*attn_mask, scores, minus_infinity);
    } else if (attn_mask->dtype() == scores.dtype()) {
      scores = add(scores, *attn_mask);
    } else {
      throw Error(fmt::format("{}: attn_mask must be Bool (true = attend) or query's dtype {} "
                              "(added to the scores), got {}",
                              kOp, dtype_name(scores.dtype()), dtype_name(attn_mask->dtype())));
    }
  }
  return matmul(softmax(scores, -1), values);
}

}  // namespace bp
