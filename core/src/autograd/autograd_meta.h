// What a tensor that takes part in autograd carries besides its data.
#pragma once

#include <backplane/autograd.h>
#include <backplane/tensor.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

namespace bp::autograd {

// A leaf's post-accumulate-grad hooks (Tensor::register_post_accumulate_grad_hook). A hook may
// remove hooks, itself included, while they run, and handles may remove them from any thread:
// the list is read under its lock and run from a snapshot.
struct HookList {
  using Hook = std::function<void(Tensor&)>;

  uint64_t add(Hook hook) {
    const std::lock_guard lock(mutex);
    hooks.emplace_back(++last_id, std::make_shared<const Hook>(std::move(hook)));
    return last_id;
  }
  void remove(uint64_t id) {
    const std::lock_guard lock(mutex);
    std::erase_if(hooks, [id](const auto& entry) { return entry.first == id; });
  }
  std::vector<std::shared_ptr<const Hook>> snapshot() {
    const std::lock_guard lock(mutex);
    std::vector<std::shared_ptr<const Hook>> result;
    result.reserve(hooks.size());
    for (const auto& entry : hooks) result.push_back(entry.second);
    return result;
  }

  std::mutex mutex;
  uint64_t last_id = 0;
  // In registration order, each under the id its handle removes it by.
  std::vector<std::pair<uint64_t, std::shared_ptr<const Hook>>> hooks;
};

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
  // Made by the first hook registered; shared with the handles, which hold it weakly.
  std::shared_ptr<HookList> post_accumulate_grad_hooks;

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
