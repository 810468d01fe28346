// How tensors join the graph: a recorded op's outputs point at its node, and a leaf's
// gradient goes to its accumulator.
#include "autograd/accumulate_grad.h"
#include "autograd/autograd_meta.h"
#include "autograd/record.h"

#include <fmt/format.h>

#include <mutex>

namespace bp::autograd {

Edge gradient_edge(const Tensor& tensor) {
  if (!requires_grad(tensor)) return {};
  AutogradMeta& meta = tensor.impl()->ensure_autograd_meta();
  if (meta.grad_fn) return {meta.grad_fn, meta.output_nr};
  // Threads that record ops on the same leaf at once must find one accumulator.
  static std::mutex accumulator_mutex;
  const std::lock_guard lock(accumulator_mutex);
  std::shared_ptr<Node> accumulator = meta.grad_accumulator.lock();
  if (!accumulator) {
    accumulator = std::make_shared<AccumulateGrad>(tensor);
    meta.grad_accumulator = accumulator;
  }
  return {std::move(accumulator), 0};
}

namespace detail {

void set_history(const Tensor& output, const std::shared_ptr<Node>& node, uint32_t output_nr) {
  if (!output.defined() || !is_floating_point(output.dtype())) return;
  AutogradMeta& meta = output.impl()->ensure_autograd_meta();
  meta.grad_fn = node;
  meta.output_nr = output_nr;
}

void refuse_gradient(std::string_view op, std::string_view argument) {
  throw Error(fmt::format(
      "{}: {} requires grad, but {} has no gradient formula for it (core/ops/derivatives.yaml); "
      "pass {}.detach() if no gradient should flow to it",
      op, argument, op, argument));
}

void refuse_unrecorded(std::string_view op, bool in_place) {
  if (in_place) {
    throw Error(fmt::format(
        "{}: an in-place op on a tensor that requires grad, or with an input that does, is not "
        "recorded by autograd; use the out-of-place op, or run it under bp::NoGradGuard when no "
        "gradient should flow through it (as an optimizer's update)",
        op));
  }
  throw Error(fmt::format(
      "{}: out= overloads are not recorded by autograd, and an input requires grad; call the "
      "functional overload, or run it under bp::NoGradGuard when no gradient should flow through "
      "it",
      op));
}

}  // namespace detail
}  // namespace bp::autograd
