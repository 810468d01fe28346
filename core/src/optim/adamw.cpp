// torch.optim.AdamW: each parameter's update is one _adamw_step kernel call.
#include <backplane/autograd.h>
#include <backplane/factories.h>
#include <backplane/generated/Functions.h>
#include <backplane/optim.h>

#include "optim/hyperparameters.h"

namespace bp::optim {

AdamW::AdamW(std::vector<Tensor> parameters, AdamWOptions options)
    : Optimizer(std::move(parameters), "AdamW"),
      options_(options),
      states_(this->parameters().size()) {
  detail::check_hyperparameter("AdamW", "lr", options_.lr, 0);
  detail::check_hyperparameter("AdamW", "beta1", options_.betas.beta1, 0, 1);
  detail::check_hyperparameter("AdamW", "beta2", options_.betas.beta2, 0, 1);
  detail::check_hyperparameter("AdamW", "eps", options_.eps, 0);
  detail::check_hyperparameter("AdamW", "weight_decay", options_.weight_decay, 0);
}

void AdamW::step() {
  const NoGradGuard no_grad;
  const AdamWOptions& o = options_;
  for (size_t i = 0; i < parameters().size(); ++i) {
    const Tensor& grad = checked_grad(i);
    if (!grad.defined()) continue;
    Tensor parameter = parameters()[i];
    ParameterState& state = states_[i];
    if (state.step == 0) {
      state.exp_avg = zeros(parameter.sizes(), parameter.dtype(), parameter.device());
      state.exp_avg_sq = zeros(parameter.sizes(), parameter.dtype(), parameter.device());
    }
    _adamw_step_out(parameter, state.exp_avg, state.exp_avg_sq, parameter, grad, state.exp_avg,
                    state.exp_avg_sq, o.lr, o.betas.beta1, o.betas.beta2, o.weight_decay, o.eps,
                    state.step + 1);
    ++state.step;
  }
}

}  // namespace bp::optim
