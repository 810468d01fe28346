// scaled_dot_product_attention: the fused kernel op where the device's backend has one and the
// arguments fit it, else PyTorch's math path: softmax(query @ key^T * scale + mask) @ value,
// over matmul, softmax and where. A row whose every position is masked out has no defined
// softmax and comes out as NaN, as in that path.
#include <backplane/backplane.h>

#include <core_generated/CompositeFunctions.h>

#include "../meta/attention.h"
#include "dispatch/dispatch.h"
#include "tensor/shape.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <optional>

namespace bp::composite {
namespace {

constexpr std::string_view kOp = "scaled_dot_product_attention";

// Grouped-query attention without copies of key or value: query heads h * groups ... h * groups
// + groups - 1 attend with key/value head h. Query (..., H, L, E) is viewed as (..., Hkv, groups,
// L, E), key and value (..., Hkv, S, E) as (..., Hkv, groups, S, E), one head for a whole group
// (stride 0), and so is a mask that names query heads; the fused kernels and matmul walk such
// views as they are. Attention over the views gives (..., Hkv, groups, L, Ev), which is (..., H,
// L, Ev). Without a mask, a group's query rows can instead stand one after another (..., Hkv,
// groups * L, E) against the unexpanded key and value.
struct GroupedHeads {
  int64_t kv_heads = 1;
  int64_t groups = 1;

  // (..., H, R, C) as (..., Hkv, groups, R, C).
  Tensor split(const Tensor& t) const {
    DimVector sizes(t.sizes());
    sizes[sizes.size() - 3] = groups;
    sizes.insert(sizes.size() - 3, kv_heads);
    return t.view(sizes);
  }
  // (..., Hkv, R, C) as (..., Hkv, groups, R, C).
  Tensor shared(const Tensor& t) const {
    DimVector sizes(t.sizes());
    sizes.insert(sizes.size() - 2, groups);
    return t.unsqueeze(-3).expand(sizes);
  }
  // A mask that broadcasts over (..., H, L, S), as one over (..., Hkv, groups, L, S): a dim of H
  // query heads splits as the query does; one of a single head gains a dim of 1 beside it.
  Tensor mask(const Tensor& t) const {
    if (t.dim() < 3) return t;
    if (t.size(-3) == 1) return t.unsqueeze(-3);
    if (t.size(-3) != kv_heads * groups) {
      throw Error(
          fmt::format("{}: attn_mask of shape {} does not broadcast over the query's {} "
                      "heads: its dim -3 must be 1 or {}",
                      kOp, detail::format_shape(t.sizes()), kv_heads * groups, kv_heads * groups));
    }
    return split(t);
  }
  // (..., Hkv, groups, L, Ev) as (..., H, L, Ev).
  Tensor merged(const Tensor& t) const {
    DimVector sizes(t.sizes());
    sizes.erase(sizes.size() - 4);
    sizes[sizes.size() - 3] = kv_heads * groups;
    return t.reshape(sizes);
  }
  // The query (..., H, L, E) as (..., Hkv, groups * L, E): a group's query rows one after another.
  Tensor rows(const Tensor& query) const {
    DimVector sizes(query.sizes());
    sizes[sizes.size() - 3] = kv_heads;
    sizes[sizes.size() - 2] *= groups;
    return query.reshape(sizes);
  }
  // (..., Hkv, groups * L, Ev) as (..., H, L, Ev).
  Tensor from_rows(const Tensor& t, int64_t query_length) const {
    DimVector sizes(t.sizes());
    sizes[sizes.size() - 3] = kv_heads * groups;
    sizes[sizes.size() - 2] = query_length;
    return t.reshape(sizes);
  }
};

// The grouping of query heads over key/value heads that enable_gqa asks for.
GroupedHeads grouped_heads(const Tensor& query, const Tensor& key, const Tensor& value) {
  const int64_t query_heads = query.dim() >= 3 ? query.size(-3) : 1;
  const int64_t kv_heads = key.dim() >= 3 ? key.size(-3) : 1;
  if (query.dim() < 3 || key.dim() < 3 || value.dim() < 3 || value.size(-3) != kv_heads ||
      kv_heads == 0 || query_heads % kv_heads != 0) {
    throw Error(
        fmt::format("{}: enable_gqa needs (..., heads, S, E) operands whose key and value "
                    "head count divides the query's, got query {}, key {}, value {}",
                    kOp, detail::format_shape(query.sizes()), detail::format_shape(key.sizes()),
                    detail::format_shape(value.sizes())));
  }
  return {kv_heads, query_heads / kv_heads};
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

// Attention over operands whose leading dims broadcast: the fused kernel op where it takes the
// case, else the math path.
Tensor attention(const Tensor& query, const Tensor& key, const Tensor& value,
                 const std::optional<Tensor>& attn_mask, bool is_causal,
                 std::optional<double> scale) {
  const bool has_mask = attn_mask.has_value();
  if (!has_mask) {
    if (std::optional<Tensor> fused = fused_attention(query, key, value, is_causal, scale)) {
      return *fused;
    }
  }

  const double scale_factor = scale.value_or(1.0 / std::sqrt(static_cast<double>(query.size(-1))));
  Tensor scores = bp::matmul(mul(query, scale_factor), key.transpose(-2, -1));
  const Tensor minus_infinity =
      full({}, -std::numeric_limits<double>::infinity(), scores.dtype(), scores.device());
  if (is_causal) {
    // Query position i attends to key positions 0..i (the mask is aligned top-left).
    const int64_t target = query.size(-2);
    const int64_t source = key.size(-2);
    const Tensor future = gt(bp::arange(source, kInt64, scores.device()).view({1, source}),
                             bp::arange(target, kInt64, scores.device()).view({target, 1}));
    scores = where(future, minus_infinity, scores);
  } else if (has_mask) {
    if (attn_mask->dtype() == kBool) {
      scores = where(*attn_mask, scores, minus_infinity);
    } else if (attn_mask->dtype() == scores.dtype()) {
      scores = add(scores, *attn_mask);
    } else {
      throw Error(
          fmt::format("{}: attn_mask must be Bool (true = attend) or query's dtype {} "
                      "(added to the scores), got {}",
                      kOp, dtype_name(scores.dtype()), dtype_name(attn_mask->dtype())));
    }
  }
  return bp::matmul(softmax(scores, -1), value);
}

}  // namespace

Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const std::optional<Tensor>& attn_mask, double dropout_p,
                                    bool is_causal, std::optional<double> scale, bool enable_gqa) {
  meta::check_floating_attention_operands(kOp, query, key, value);
  if (dropout_p != 0.0) {
    throw Error(
        fmt::format("{}: dropout_p must be 0, got {}; Backplane computes attention for "
                    "inference, without dropout",
                    kOp, dropout_p));
  }
  const bool has_mask = attn_mask && attn_mask->defined();
  if (is_causal && has_mask) {
    throw Error(
        fmt::format("{}: pass either is_causal=true or attn_mask, not both; fold the "
                    "causal mask into attn_mask to combine them",
                    kOp));
  }
  const std::optional<Tensor> mask = has_mask ? attn_mask : std::nullopt;
  if (enable_gqa) {
    const GroupedHeads heads = grouped_heads(query, key, value);
    if (heads.groups > 1 && !mask && !is_causal) {
      // Without a mask, a query row's result does not depend on its position: a group's rows
      // attend together to their key/value head, which is then read once for all of them.
      return heads.from_rows(attention(heads.rows(query), key, value, std::nullopt, false, scale),
                             query.size(-2));
    }
    if (heads.groups > 1) {
      return heads.merged(attention(heads.split(query), heads.shared(key), heads.shared(value),
                                    mask ? std::optional<Tensor>(heads.mask(*mask)) : std::nullopt,
                                    is_causal, scale));
    }
  }
  return attention(query, key, value, mask, is_causal, scale);
}

}  // namespace bp::composite
