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
    // A leaf's grad is later updated in place (by accumulation, optimizers, zero_grad), so the
    // leaf keeps a dense tensor of its own. A formula may hand one tensor to several inputs
    // (add's grad goes to both), a view of a larger tensor, or an expanded view of one value
    // (sum's grad): only a contiguous gradient that nothing else holds is kept as it is.
    const TensorImpl& impl = *incoming.impl();
    const bool owned = impl.use_count() == 1 && impl.storage()->use_count() == 1;
    grad = owned && incoming.is_contiguous() ? std::move(incoming) : incoming.clone();
  } else {
    grad.add_(incoming);
  }
  return {};
}

}  // namespace bp::autograd
