// What the generated recording functions (core_generated/Autograd.cpp, from
// core/ops/derivatives.yaml) use to put an op into the autograd graph.
#pragma once

#include <backplane/autograd.h>
#include <backplane/tensor.h>

#include <autograd/autograd_meta.h>
#include <autograd/saved_variable.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <tuple>
#include <vector>

namespace bp::autograd::detail {

inline bool any_requires_grad(const Tensor& tensor) { return requires_grad(tensor); }
inline bool any_requires_grad(const std::optional<Tensor>& tensor) {
  return tensor && requires_grad(*tensor);
}
inline bool any_requires_grad(const std::vector<Tensor>& tensors) {
  for (const Tensor& tensor : tensors) {
    if (requires_grad(tensor)) return true;
  }
  return false;
}

// Whether an op given these differentiable inputs records a node: one of them needs a
// gradient and grad mode is on. Checked first by every differentiable op, so the common case
// (no input with autograd metadata) costs a load per input.
template <typename... Inputs>
bool needs_recording(const Inputs&... inputs) {
  return (any_requires_grad(inputs) || ...) && is_grad_enabled();
}

// Out= and in-place overloads are not recorded: called with inputs that need gradients while
// grad mode is on, they refuse instead of computing a result whose gradient would be wrong.
[[noreturn]] void refuse_unrecorded(std::string_view op, bool in_place);
template <typename... Inputs>
void check_not_recorded(std::string_view op, bool in_place, const Inputs&... inputs) {
  if (needs_recording(inputs...)) [[unlikely]]
    refuse_unrecorded(op, in_place);
}

// A functional op that derivatives.yaml has no entry for, called with inputs that need
// gradients while grad mode is on: it refuses rather than return a result without history.
[[noreturn]] void refuse_no_formula(std::string_view op);

// Whether the op returned one of its inputs itself (contiguous() of a contiguous tensor,
// to() of the same dtype): it then records nothing, and the gradient flows through the input's
// own history.
inline bool is_an_input(const Tensor&) { return false; }
template <typename... Inputs>
bool is_an_input(const Tensor& result, const Tensor& input, const Inputs&... inputs) {
  return result.impl() == input.impl() || is_an_input(result, inputs...);
}

// Makes `output` output `output_nr` of `node`. Outputs that are not floating point (indices)
// get no history: they have no gradient.
void set_history(const Tensor& output, const std::shared_ptr<Node>& node, uint32_t output_nr);

}  // namespace bp::autograd::detail
