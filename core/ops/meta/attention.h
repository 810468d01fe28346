// The operand rules every attention op shares, for the fused kernel op's meta function and for
// the scaled_dot_product_attention composite, which checks before it picks a path.
#pragma once

#include <backplane/tensor.h>

#include <string_view>

namespace bp::meta {

// query (..., L, E), key (..., S, E) and value (..., S, Ev), all defined and of one dtype;
// otherwise a bp::Error that starts with `op` and shows the shapes or dtypes. Leading dims are
// not compared here: the composite broadcasts them, the fused op requires them equal.
void check_attention_operands(std::string_view op, const Tensor& query, const Tensor& key,
                              const Tensor& value);

// The same, and that dtype floating point: the composite's rule. It picks a path before any
// kernel op sees the dtype, so it refuses an integer dtype itself.
void check_floating_attention_operands(std::string_view op, const Tensor& query, const Tensor& key,
                                       const Tensor& value);

// True when `a` and `b` (at least 2 dims each) have the same dims before their last two.
bool same_leading_dims(const Tensor& a, const Tensor& b);

}  // namespace bp::meta
