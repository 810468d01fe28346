#include "autograd/accumulate_grad.h"

#include "autograd/autograd_meta.h"

#include <backplane/backplane.h>

namespace bp::autograd {

AccumulateGrad::AccumulateGrad(Tensor leaf) : leaf_(std::move(leaf)) { set_num_outputs(1); }

std::vector<Tensor> AccumulateGrad::apply(std::vector<Tensor>&& grads) {
  Tensor& incoming = grads[0];
  if (!incoming.defined()) return {};
  const std::lock_guard lock(mutex_);
  Tensor& grad = leaf_.impl()->ensure_autograd_meta().grad;
  if (!grad.defined()) {
    // A formula may hand the same tensor to several inputs (add's grad goes to both), and a
    // leaf's grad is later updated in place: the leaf keeps a tensor of its own.
    grad = incoming.impl()->use_count() == 1 ? std::move(incoming) : incoming.clone();
  } else {
    grad.add_(incoming);
  }
  return {};
}

}  // namespace bp::autograd
