// The node at a leaf: it adds the gradient that reaches it to the leaf's grad(). Graphs recorded
// on several threads share a parameter's accumulator, and their backward passes may run at once:
// the addition holds a lock. After it, the node runs the leaf's post-accumulate-grad hooks.
#pragma once

#include "autograd/autograd_meta.h"

#include <backplane/autograd.h>
#include <backplane/tensor.h>

#include <memory>
#include <mutex>
#include <vector>

namespace bp::autograd {

class AccumulateGrad final : public Node {
 public:
  explicit AccumulateGrad(Tensor leaf);

  std::string_view name() const override { return "AccumulateGrad"; }
  std::vector<Tensor> apply(std::vector<Tensor>&& grads) override;

  const Tensor& leaf() const { return leaf_; }

 private:
  void add_to_grad(Tensor& grad, Tensor& incoming);
  void run_hooks(const std::vector<std::shared_ptr<const HookList::Hook>>& hooks);

  Tensor leaf_;
  std::mutex mutex_;
};

}  // namespace bp::autograd
