// bp::Tensor's autograd methods.
#include <backplane/autograd.h>
#include <backplane/tensor.h>

#include "autograd/autograd_meta.h"

#include <fmt/format.h>

namespace bp {

namespace {
const Tensor kNoGrad;
const std::shared_ptr<autograd::Node> kNoNode;
}  // namespace

Tensor& Tensor::requires_grad_(bool requires_grad) {
  TensorImpl& impl = defined_impl("requires_grad_");
  autograd::AutogradMeta* meta = impl.autograd_meta();
  if (meta != nullptr && meta->grad_fn) {
    if (requires_grad) return *this;
    throw Error(fmt::format(
        "requires_grad_(false): this tensor was made by {} from tensors that require grad, so "
        "it is not a leaf and its requires_grad follows from them; use .detach() for a copy "
        "without history",
        meta->grad_fn->name()));
  }
  if (requires_grad && !is_floating_point(impl.dtype())) {
    throw Error(fmt::format(
        "requires_grad_: only floating-point tensors can require gradients, and this one is "
        "{}; convert it first with .to(bp::kFloat32)",
        dtype_name(impl.dtype())));
  }
  if (meta == nullptr && !requires_grad) return *this;
  impl.ensure_autograd_meta().requires_grad = requires_grad;
  return *this;
}

bool Tensor::requires_grad() const {
  const autograd::AutogradMeta* meta = defined_impl("requires_grad").autograd_meta();
  return meta != nullptr && meta->requires_grad_or_has_history();
}

const Tensor& Tensor::grad() const {
  const autograd::AutogradMeta* meta = defined_impl("grad").autograd_meta();
  return meta != nullptr ? meta->grad : kNoGrad;
}

Tensor& Tensor::mutable_grad() { return defined_impl("mutable_grad").ensure_autograd_meta().grad; }

HookHandle Tensor::register_post_accumulate_grad_hook(std::function<void(Tensor& leaf)> hook) {
  TensorImpl& impl = defined_impl("register_post_accumulate_grad_hook");
  autograd::AutogradMeta* meta = impl.autograd_meta();
  if (meta != nullptr && meta->grad_fn) {
    throw Error(fmt::format(
        "register_post_accumulate_grad_hook: this tensor was made by {}, so it is not a leaf "
        "and backward() accumulates no grad() into it; register the hook on the leaf (the "
        "parameter) it was computed from",
        meta->grad_fn->name()));
  }
  if (meta == nullptr || !meta->requires_grad) {
    throw Error(
        "register_post_accumulate_grad_hook: this tensor does not require grad, so backward() "
        "never accumulates a gradient into it; call requires_grad_() on it first");
  }
  if (!hook) {
    throw Error(
        "register_post_accumulate_grad_hook: the hook is an empty std::function; pass "
        "a callable");
  }
  std::shared_ptr<autograd::HookList>& hooks = meta->post_accumulate_grad_hooks;
  if (!hooks) hooks = std::make_shared<autograd::HookList>();
  const uint64_t id = hooks->add(std::move(hook));
  return HookHandle(hooks, id);
}

bool Tensor::is_leaf() const {
  const autograd::AutogradMeta* meta = defined_impl("is_leaf").autograd_meta();
  return meta == nullptr || meta->grad_fn == nullptr;
}

const std::shared_ptr<autograd::Node>& Tensor::grad_fn() const {
  const autograd::AutogradMeta* meta = defined_impl("grad_fn").autograd_meta();
  return meta != nullptr ? meta->grad_fn : kNoNode;
}

void Tensor::backward(const Tensor& gradient, bool retain_graph) const {
  autograd::backward({*this},
                     gradient.defined() ? std::vector<Tensor>{gradient} : std::vector<Tensor>{},
                     retain_graph);
}

Tensor Tensor::detach() const {
  const TensorImpl& impl = defined_impl("detach");
  return Tensor(make_intrusive<TensorImpl>(impl.storage(), impl.dtype(), impl.sizes(),
                                           impl.strides(), impl.storage_offset()));
}

void HookHandle::remove() {
  if (const std::shared_ptr<autograd::HookList> hooks = hooks_.lock()) hooks->remove(id_);
  hooks_.reset();
}

}  // namespace bp
