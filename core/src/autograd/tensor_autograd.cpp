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

}  // namespace bp
