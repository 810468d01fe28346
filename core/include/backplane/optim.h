// Optimizers with PyTorch's shape (torch.optim): made from the parameters they update, each
// step() updates every parameter that has a gradient with one kernel call (the `_sgd_step` and
// `_adamw_step` ops), so that a step on a GPU costs one launch per parameter.
#pragma once

#include <backplane/tensor.h>

#include <cstdint>
#include <vector>

namespace bp::optim {

// The parameters an optimizer updates, and what every optimizer does with them.
class Optimizer {
 public:
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  // Updates every parameter whose grad() is defined from that gradient; the others are left
  // alone, as PyTorch does. Runs without recording the autograd graph.
  virtual void step() = 0;
  // Clears every parameter's gradient before the next backward pass accumulates into it:
  // set_to_none leaves grad() undefined (PyTorch's default), otherwise it is filled with zeros.
  void zero_grad(bool set_to_none = true);

  const std::vector<Tensor>& parameters() const { return parameters_; }

 protected:
  // Checks that `parameters` can be optimized: at least one, each a defined floating-point
  // leaf that requires grad, none twice. `optimizer` names the caller in error messages.
  Optimizer(std::vector<Tensor> parameters, const char* optimizer);

  // The gradient of parameter `index`, checked against it: same shape, dtype and device.
  // Undefined when the parameter has none.
  const Tensor& checked_grad(size_t index) const;

 private:
  std::vector<Tensor> parameters_;
  const char* name_;
};

struct SGDOptions {
  double lr = 1e-3;
  double momentum = 0;
  double dampening = 0;
  double weight_decay = 0;
  bool nesterov = false;
};

// Stochastic gradient descent with momentum and weight decay (torch.optim.SGD): with d the
// gradient plus weight_decay * param, the momentum buffer b starts as d and then becomes
// momentum * b + (1 - dampening) * d; the parameter moves by -lr * b, or by -lr * (d +
// momentum * b) with nesterov.
class SGD final : public Optimizer {
 public:
  // A bp::Error when lr, momentum, dampening or weight_decay is negative, or nesterov is asked
  // without a momentum or with a dampening.
  SGD(std::vector<Tensor> parameters, SGDOptions options);

  void step() override;

  // The hyperparameters the next step uses (they may be changed between steps).
  SGDOptions& options() { return options_; }
  const SGDOptions& options() const { return options_; }
  // Parameter `index`'s momentum buffer; undefined before its first step.
  const Tensor& momentum_buffer(size_t index) const { return momentum_buffers_.at(index); }

 private:
  SGDOptions options_;
  std::vector<Tensor> momentum_buffers_;
};

struct AdamWBetas {
  double beta1 = 0.9;
  double beta2 = 0.999;
};

struct AdamWOptions {
  double lr = 1e-3;
  AdamWBetas betas;
  double eps = 1e-8;
  double weight_decay = 1e-2;
};

// Adam with decoupled weight decay (torch.optim.AdamW, without amsgrad): the parameter first
// shrinks by lr * weight_decay of itself, then moves by -lr * m_hat / (sqrt(v_hat) + eps), where
// m and v are running averages of the gradient and its square and the hats their bias
// corrections for the parameter's step count.
class AdamW final : public Optimizer {
 public:
  // A bp::Error when lr, eps or weight_decay is negative, or a beta lies outside [0, 1).
  AdamW(std::vector<Tensor> parameters, AdamWOptions options);

  void step() override;

  AdamWOptions& options() { return options_; }
  const AdamWOptions& options() const { return options_; }

  // What AdamW keeps for one parameter; the tensors are undefined and step is 0 before its
  // first step.
  struct ParameterState {
    int64_t step = 0;
    Tensor exp_avg;
    Tensor exp_avg_sq;
  };
  const ParameterState& state(size_t index) const { return states_.at(index); }

 private:
  AdamWOptions options_;
  std::vector<ParameterState> states_;
};

}  // namespace bp::optim
