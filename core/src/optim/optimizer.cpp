// What every optimizer does with its parameters: checking them, and clearing their gradients.
#include <backplane/autograd.h>
#include <backplane/generated/Functions.h>
#include <backplane/optim.h>

#include <fmt/format.h>

#include <algorithm>

namespace bp::optim {

Optimizer::Optimizer(std::vector<Tensor> parameters, const char* optimizer)
    : parameters_(std::move(parameters)), name_(optimizer) {
  if (parameters_.empty()) {
    throw Error(
        fmt::format("bp::optim::{}: got an empty list of parameters; pass the tensors "
                    "the optimizer should update",
                    name_));
  }
  for (size_t i = 0; i < parameters_.size(); ++i) {
    const Tensor& parameter = parameters_[i];
    if (!parameter.defined()) {
      throw Error(fmt::format("bp::optim::{}: parameter {} is an undefined tensor", name_, i));
    }
    if (!parameter.requires_grad()) {
      throw Error(fmt::format(
          "bp::optim::{}: parameter {} ({}) does not require grad, so backward() never gives "
          "it a gradient to step with; call requires_grad_() on it first",
          name_, i, parameter.str()));
    }
    if (!parameter.is_leaf()) {
      throw Error(fmt::format(
          "bp::optim::{}: parameter {} ({}) was computed by an op, and only leaves get a "
          "gradient; pass the tensor it was computed from, or a .detach()ed copy that "
          "requires grad",
          name_, i, parameter.str()));
    }
    const auto same = [&](const Tensor& other) { return other.impl() == parameter.impl(); };
    const auto first = std::find_if(parameters_.begin(), parameters_.end(), same);
    if (first != parameters_.begin() + static_cast<std::ptrdiff_t>(i)) {
      throw Error(
          fmt::format("bp::optim::{}: parameters {} and {} are the same tensor; pass "
                      "each parameter once",
                      name_, first - parameters_.begin(), i));
    }
  }
}

void Optimizer::zero_grad(bool set_to_none) {
  const NoGradGuard no_grad;
  for (Tensor& parameter : parameters_) {
    Tensor& grad = parameter.mutable_grad();
    if (!grad.defined()) continue;
    if (set_to_none) {
      grad = Tensor();
    } else {
      fill_(grad, 0);
    }
  }
}

const Tensor& Optimizer::checked_grad(size_t index) const {
  const Tensor& parameter = parameters_[index];
  const Tensor& grad = parameter.grad();
  if (!grad.defined()) return grad;
  if (grad.device() != parameter.device() || grad.dtype() != parameter.dtype() ||
      !std::ranges::equal(grad.sizes(), parameter.sizes())) {
    throw Error(fmt::format(
        "bp::optim::{}: parameter {} is {} but its gradient is {}; a gradient must match its "
        "parameter's shape, dtype and device (move the parameter before backward(), not after)",
        name_, index, parameter.str(), grad.str()));
  }
  return grad;
}

}  // namespace bp::optim
