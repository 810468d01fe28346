// Meta function of the fused attention kernel op, and the operand rules it shares with the
// scaled_dot_product_attention composite.
#include "attention.h"

#include "meta_support.h"

#include <core_generated/MetaFunctions.h>

#include <fmt/format.h>

#include <algorithm>

namespace bp::meta {

namespace {

[[noreturn]] void throw_attention_dtypes(std::string_view op, const Tensor& query,
                                         const Tensor& key, const Tensor& value) {
  throw Error(fmt::format(
      "{}: query, key and value must share one floating-point dtype, got "
      "{}, {}, {}",
      op, dtype_name(query.dtype()), dtype_name(key.dtype()), dtype_name(value.dtype())));
}

}  // namespace

void check_attention_operands(std::string_view op, const Tensor& query, const Tensor& key,
                              const Tensor& value) {
  for (const Tensor* t : {&query, &key, &value}) support::check_defined(*t);
  if (query.dim() < 2 || key.dim() < 2 || value.dim() < 2) {
    throw Error(
        fmt::format("{}: query, key and value need at least 2 dims (..., L or S, E), got "
                    "shapes {}, {}, {}",
                    op, detail::format_shape(query.sizes()), detail::format_shape(key.sizes()),
                    detail::format_shape(value.sizes())));
  }
  if (key.size(-1) != query.size(-1) || key.size(-2) != value.size(-2)) {
    throw Error(
        fmt::format("{}: key must end in query's embedding size and have value's "
                    "sequence length: query {}, key {}, value {}",
                    op, detail::format_shape(query.sizes()), detail::format_shape(key.sizes()),
                    detail::format_shape(value.sizes())));
  }
  if (key.dtype() != query.dtype() || value.dtype() != query.dtype()) {
    throw_attention_dtypes(op, query, key, value);
  }
}

void check_floating_attention_operands(std::string_view op, const Tensor& query, const Tensor& key,
                                       const Tensor& value) {
  check_attention_operands(op, query, key, value);
  if (!is_floating_point(query.dtype())) throw_attention_dtypes(op, query, key, value);
}

bool same_leading_dims(const Tensor& a, const Tensor& b) {
  return a.dim() == b.dim() &&
         std::equal(a.sizes().begin(), a.sizes().end() - 2, b.sizes().begin());
}

// _scaled_dot_product_fused_attention: the shared operand rules (the dtypes it takes are
// ops.yaml's), and leading dims (batch,
// heads, ...) equal in all three, since the kernel does not broadcast. out is (..., L, Ev) in
// query's dtype.
std::array<OutputSpec, 1> _scaled_dot_product_fused_attention_out(
    Tensor& query, Tensor& key, Tensor& value, bool /*is_causal*/,
    std::optional<double> /*scale: any value*/) {
  constexpr std::string_view op = "_scaled_dot_product_fused_attention";
  const Device device = support::common_device({&query, &key, &value});
  check_attention_operands(op, query, key, value);
  if (!same_leading_dims(query, key) || !same_leading_dims(query, value)) {
    throw Error(
        fmt::format("{}: query, key and value must have the same leading dims (batch, "
                    "heads, ...), got shapes {}, {}, {}; expand them first, or call "
                    "scaled_dot_product_attention, which broadcasts",
                    op, detail::format_shape(query.sizes()), detail::format_shape(key.sizes()),
                    detail::format_shape(value.sizes())));
  }
  DimVector shape(query.sizes());
  shape[shape.size() - 1] = value.size(-1);
  return {OutputSpec{std::move(shape), query.dtype(), device}};
}

}  // namespace bp::meta
