// Meta functions of the negative log-likelihood loss and its gradient. All tensors are on one
// device; outputs are contiguous.
#include "meta_support.h"

#include <core_generated/MetaFunctions.h>

#include <fmt/format.h>

namespace bp::meta {
namespace {

// What nll_loss_forward and nll_loss_backward (`op`) share: self is [N, C] or [C] and target,
// Int32 or Int64, is [N] or [] to match; weight, when present, has C elements and is converted
// to self's dtype; reduction is 0, 1 or 2. self, target and weight are made contiguous, target
// Int64 and weight 1-D.
void prepare_nll_loss_arguments(std::string_view op, Tensor& self, Tensor& target,
                                std::optional<Tensor>& weight, int64_t reduction) {
  if (self.dim() != 1 && self.dim() != 2) {
    throw Error(fmt::format("{}: expected self of 1 or 2 dims ([C] or [N, C]), got shape {}", op,
                            detail::format_shape(self.sizes())));
  }
  support::prepare_indices(op, "target", target);
  const bool batched = self.dim() == 2;
  if (batched ? target.dim() != 1 || target.size(0) != self.size(0) : target.dim() != 0) {
    throw Error(fmt::format(
        "{}: expected target of shape {} (one class index per row of self, of shape {}), got "
        "shape {}",
        op, batched ? fmt::format("[{}]", self.size(0)) : std::string("[]"),
        detail::format_shape(self.sizes()), detail::format_shape(target.sizes())));
  }
  const int64_t classes = self.size(-1);
  if (Tensor* w = support::present(weight)) {
    if (w->numel() != classes) {
      throw Error(fmt::format("{}: expected weight with one value per class ({}), got shape {}",
                              op, classes, detail::format_shape(w->sizes())));
    }
    if (w->dtype() != self.dtype()) *w = w->to(self.dtype());
    *w = w->reshape({classes}).contiguous();
  }
  if (reduction < 0 || reduction > 2) {
    throw Error(fmt::format("{}: reduction must be 0 (none), 1 (mean) or 2 (sum), got {}", op,
                            reduction));
  }
  self = self.contiguous();
  target = target.contiguous();
}

// The loss's shape: one value per row for reduction 0 (none) with a batch, else 0-D.
DimVector loss_shape(const Tensor& self, int64_t reduction) {
  return reduction == 0 && self.dim() == 2 ? DimVector{self.size(0)} : DimVector{};
}

}  // namespace

// nll_loss_forward: see prepare_nll_loss_arguments; ignore_index is any value. Outputs: the
// loss (loss_shape) and total_weight (0-D), with self's dtype. The kernel refuses a target that
// is neither ignore_index nor a class in [0, C).
std::array<OutputSpec, 2> nll_loss_forward_output(Tensor& self, Tensor& target,
                                                  std::optional<Tensor>& weight,
                                                  int64_t reduction, int64_t /*ignore_index*/) {
  const Device device =
      support::common_device({&self, &target, support::present(weight)});
  prepare_nll_loss_arguments("nll_loss_forward", self, target, weight, reduction);
  return {OutputSpec{loss_shape(self, reduction), self.dtype(), device},
          OutputSpec{DimVector{}, self.dtype(), device}};
}

// nll_loss_backward: see prepare_nll_loss_arguments; grad_output has the loss's shape
// (loss_shape) and total_weight one element; both are converted to self's dtype and made
// contiguous. grad_input has self's shape and dtype. The kernel refuses targets as
// nll_loss_forward's does.
std::array<OutputSpec, 1> nll_loss_backward_grad_input(Tensor& grad_output, Tensor& self,
                                                       Tensor& target,
                                                       std::optional<Tensor>& weight,
                                                       int64_t reduction,
                                                       int64_t /*ignore_index*/,
                                                       Tensor& total_weight) {
  constexpr std::string_view op = "nll_loss_backward";
  const Device device = support::common_device(
      {&grad_output, &self, &target, support::present(weight), &total_weight});
  prepare_nll_loss_arguments(op, self, target, weight, reduction);
  const DimVector expected = loss_shape(self, reduction);
  const bool fits = expected.empty() ? grad_output.numel() == 1 && grad_output.dim() <= 1
                                     : std::ranges::equal(expected.ref(), grad_output.sizes());
  if (!fits) {
    throw Error(fmt::format("{}: expected grad_output of the loss's shape {}, got shape {}", op,
                            detail::format_shape(expected.ref()),
                            detail::format_shape(grad_output.sizes())));
  }
  if (total_weight.numel() != 1) {
    throw Error(fmt::format("{}: expected total_weight of one element, got shape {}", op,
                            detail::format_shape(total_weight.sizes())));
  }
  for (Tensor* t : {&grad_output, &total_weight}) {
    if (t->dtype() != self.dtype()) *t = t->to(self.dtype());
    *t = t->contiguous();
  }
  return {OutputSpec{DimVector(self.sizes()), self.dtype(), device}};
}

}  // namespace bp::meta
