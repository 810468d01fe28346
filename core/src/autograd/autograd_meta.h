// What a tensor that takes part in autograd carries besides its data.
#pragma once

#include <backplane/autograd.h>
#include <backplane/tensor.h>

#include <cstdint>
#include <memory>

namespace bp::autograd {

struct AutogradMeta {
  // Set on leaves by requires_grad_(); a recorded tensor requires grad through grad_fn.
  bool requires_grad = false;
  Tensor grad;
  // The node that made the tensor (null for a leaf), and which of its outputs the tensor is.
  std::shared_ptr<Node> grad_fn;
  uint32_t output_nr = 0;
  // A leaf's accumulator, made when the first node records the leaf as an input and shared
  // by every node after it. Weak: the graph owns it, so it goes away with the graph.
  std::weak_ptr<Node> grad_accumulator;

  bool requires_grad_or_has_history() const { return requires_grad || grad_fn != nullptr; }
};

// Whether `tensor` needs gradients: a leaf that requires grad or a tensor with history.
inline bool requires_grad(const Tensor& tensor) {
  const TensorImpl* impl = tensor.impl();
  if (impl == nullptr) return false;
  const AutogradMeta* meta = impl->autograd_meta();
  return meta != nullptr && meta->requires_grad_or_has_history();
}

// Where a gradient for `tensor` goes: its node's output, or its leaf accumulator (made on
// first use). Invalid when the tensor needs no gradient.
Edge gradient_edge(const Tensor& tensor);

}  // namespace bp::autograd
