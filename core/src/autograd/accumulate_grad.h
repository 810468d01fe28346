// The node at a leaf: it adds the gradient that reaches it to the leaf's grad(). Graphs recorded
// on several threads share a parameter's accumulator, and their backward passes may run at once:
// the addition holds a lock.
#pragma once

#include <backplane/autograd.h>
#include <backplane/tensor.h>

#include <mutex>

namespace bp::autograd {

class AccumulateGrad final : public Node {
 public:
  explicit AccumulateGrad(Tensor leaf);

  std::string_view name() const override { return "AccumulateGrad"; }
  std::vector<Tensor> apply(std::vector<Tensor>&& grads) override;

  const Tensor& leaf() const { return leaf_; }

 private:
  Tensor leaf_;
  std::mutex mutex_;
};

}  // namespace bp::autograd
