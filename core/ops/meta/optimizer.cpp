// Meta functions of the optimizer steps, which update one parameter and its state in place.
// Every tensor has the parameter's shape and dtype and is on its device; each reaches the
// kernel contiguous (a copy where it is not, whose result the core copies back).
#include "meta_support.h"

#include <core_generated/MetaFunctions.h>

#include <fmt/format.h>

#include <algorithm>
#include <initializer_list>
#include <limits>
#include <utility>

namespace bp::meta {
namespace {

// `state` (grad and the optimizer's buffers, each named) must have param's shape and dtype.
void prepare_step_tensors(std::string_view op, Tensor& param,
                          std::initializer_list<std::pair<const char*, Tensor*>> state) {
  for (auto [name, t] : state) {
    if (!std::ranges::equal(t->sizes(), param.sizes())) {
      throw Error(fmt::format("{}: expected {} of param's shape {}, got {}", op, name,
                              detail::format_shape(param.sizes()),
                              detail::format_shape(t->sizes())));
    }
    support::check_same_dtype(*t, param.dtype(), fmt::format("{}: {}", op, name));
    *t = t->contiguous();
  }
  param = param.contiguous();
}

// A hyperparameter that must lie in [low, high) (high: infinity for none).
void check_range(std::string_view op, const char* name, double value, double low,
                 double high = std::numeric_limits<double>::infinity()) {
  if (!(value >= low && value < high)) {
    throw Error(fmt::format("{}: {} must be in [{}, {}), got {}", op, name, low, high, value));
  }
}

OutputSpec like(const Tensor& param) {
  return OutputSpec{DimVector(param.sizes()), param.dtype(), param.device()};
}

}  // namespace

// _sgd_step: lr, momentum, dampening and weight_decay are not negative; nesterov needs a
// momentum and no dampening, as torch.optim.SGD requires. Outputs: param's shape and dtype.
std::array<OutputSpec, 2> _sgd_step_out(Tensor& param, Tensor& grad, Tensor& momentum_buffer,
                                        double lr, double momentum, double dampening,
                                        double weight_decay, bool nesterov,
                                        bool /*first_step*/) {
  constexpr std::string_view op = "_sgd_step";
  support::common_device({&param, &grad, &momentum_buffer});
  check_range(op, "lr", lr, 0);
  check_range(op, "momentum", momentum, 0);
  check_range(op, "dampening", dampening, 0);
  check_range(op, "weight_decay", weight_decay, 0);
  if (nesterov && (momentum <= 0 || dampening != 0)) {
    throw Error(fmt::format(
        "{}: nesterov momentum needs a momentum above 0 and dampening 0, got momentum {} and "
        "dampening {}",
        op, momentum, dampening));
  }
  prepare_step_tensors(op, param, {{"grad", &grad}, {"momentum_buffer", &momentum_buffer}});
  return {like(param), like(param)};
}

// _adamw_step: lr, weight_decay and eps are not negative, beta1 and beta2 lie in [0, 1), step
// is at least 1, as torch.optim.AdamW requires. Outputs: param's shape and dtype.
std::array<OutputSpec, 3> _adamw_step_out(Tensor& param, Tensor& grad, Tensor& exp_avg,
                                          Tensor& exp_avg_sq, double lr, double beta1,
                                          double beta2, double weight_decay, double eps,
                                          int64_t step) {
  constexpr std::string_view op = "_adamw_step";
  support::common_device({&param, &grad, &exp_avg, &exp_avg_sq});
  check_range(op, "lr", lr, 0);
  check_range(op, "beta1", beta1, 0, 1);
  check_range(op, "beta2", beta2, 0, 1);
  check_range(op, "weight_decay", weight_decay, 0);
  check_range(op, "eps", eps, 0);
  if (step < 1) throw Error(fmt::format("{}: step counts from 1, got {}", op, step));
  prepare_step_tensors(op, param,
                       {{"grad", &grad}, {"exp_avg", &exp_avg}, {"exp_avg_sq", &exp_avg_sq}});
  return {like(param), like(param), like(param)};
}

}  // namespace bp::meta
