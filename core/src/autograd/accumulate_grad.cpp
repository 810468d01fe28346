#include "autograd/accumulate_grad.h"

#include "autograd/autograd_meta.h"

#include <backplane/backplane.h>

#include <fmt/format.h>

namespace bp::autograd {

AccumulateGrad::AccumulateGrad(Tensor leaf) : leaf_(std::move(leaf)) { set_num_outputs(1); }

std::vector<Tensor> AccumulateGrad::apply(std::vector<Tensor>&& grads) {
  Tensor& incoming = grads[0];
  if (!incoming.defined()) return {};
  AutogradMeta& meta = leaf_.impl()->ensure_autograd_meta();
  add_to_grad(meta.grad, incoming);
  if (meta.post_accumulate_grad_hooks) {
    run_hooks(meta.post_accumulate_grad_hooks->snapshot());
  }
  return {};
}

void AccumulateGrad::add_to_grad(Tensor& grad, Tensor& incoming) {
  const std::lock_guard lock(mutex_);
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
}

// Outside the accumulation lock: a hook may read or replace grad(), and one that throws leaves
// no lock held.
void AccumulateGrad::run_hooks(const std::vector<std::shared_ptr<const HookList::Hook>>& hooks) {
  // Hooks get a copy of the Tensor: one that assigns to its argument cannot change leaf_.
  Tensor leaf = leaf_;
  for (const std::shared_ptr<const HookList::Hook>& hook : hooks) {
    try {
      (*hook)(leaf);
    } catch (const std::exception& error) {
      throw Error(fmt::format("a post-accumulate-grad hook of the leaf {} threw: {}", leaf_.str(),
                              error.what()));
    }
  }
}

}  // namespace bp::autograd
