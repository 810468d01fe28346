// torch.optim.SGD: each parameter's update is one _sgd_step kernel call.
#include <backplane/autograd.h>
#include <backplane/factories.h>
#include <backplane/generated/Functions.h>
#include <backplane/optim.h>

#include "optim/hyperparameters.h"

#include <fmt/format.h>

namespace bp::optim {

SGD::SGD(std::vector<Tensor> parameters, SGDOptions options)
    : Optimizer(std::move(parameters), "SGD"),
      options_(options),
      momentum_buffers_(this->parameters().size()) {
  detail::check_hyperparameter("SGD", "lr", options_.lr, 0);
  detail::check_hyperparameter("SGD", "momentum", options_.momentum, 0);
  detail::check_hyperparameter("SGD", "dampening", options_.dampening, 0);
  detail::check_hyperparameter("SGD", "weight_decay", options_.weight_decay, 0);
  if (options_.nesterov && (options_.momentum <= 0 || options_.dampening != 0)) {
    throw Error(fmt::format(
        "bp::optim::SGD: nesterov momentum needs a momentum above 0 and dampening 0, got "
        "momentum {} and dampening {}",
        options_.momentum, options_.dampening));
  }
}

void SGD::step() {
  const NoGradGuard no_grad;
  const SGDOptions& o = options_;
  for (size_t i = 0; i < parameters().size(); ++i) {
    const Tensor& grad = checked_grad(i);
    if (!grad.defined()) continue;
    Tensor parameter = parameters()[i];
    // Without momentum PyTorch keeps no buffer; the kernel still writes one, a temporary.
    Tensor scratch;
    Tensor& buffer = o.momentum == 0 ? scratch : momentum_buffers_[i];
    const bool first_step = !buffer.defined();
    if (first_step) buffer = empty(parameter.sizes(), parameter.dtype(), parameter.device());
    _sgd_step_out(parameter, buffer, parameter, grad, buffer, o.lr, o.momentum, o.dampening,
                  o.weight_decay, o.nesterov, first_step);
  }
}

}  // namespace bp::optim
