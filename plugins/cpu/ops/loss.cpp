// The negative log-likelihood loss and its gradient. The meta step made self (N, C) or (C),
// target (N) or () of Int64, and weight (C) contiguous, and converted weight, grad_output and
// total_weight to self's dtype. A target is ignore_index or a class in [0, C). The sums run in
// double: one term per sample, few enough that the cost does not matter.
#include "CPUNativeFunctions.h"

#include "kernels/strided_loop.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>

namespace bp::cpu {
namespace {

// `target` when it is a class of `classes`, else an error naming it.
int64_t checked_class(std::string_view op, int64_t target, int64_t classes) {
  if (target < 0 || target >= classes) {
    throw Error(BP_STATUS_INVALID_ARGUMENT,
                std::string(op) + ": target " + std::to_string(target) +
                    " is out of bounds for " + std::to_string(classes) +
                    " classes (nor is it ignore_index)");
  }
  return target;
}

// The samples of self and their class count: a 1-D self is one sample.
struct Samples {
  int64_t count;
  int64_t classes;
};

Samples samples_of(const TensorView& self) {
  return {self.dim() == 2 ? self.size(0) : 1, self.size(self.dim() - 1)};
}

}  // namespace

// Each sample not ignored adds -weight[t] * self[t] to the loss and weight[t] to total_weight;
// the mean divides the first by the second (0 / 0, NaN, when every sample is ignored, as in
// PyTorch). Without reduction, each sample's loss (0 where ignored) and a total_weight of 0.
void nll_loss_forward_output(const TensorView& self, const TensorView& target,
                             const TensorView* weight, int64_t reduction, int64_t ignore_index,
                             const TensorView& output, const TensorView& total_weight) {
  constexpr std::string_view op = "nll_loss_forward";
  plugin::require_dtypes(
      op, {{"weight", weight}, {"output", &output}, {"total_weight", &total_weight}},
      self.dtype());
  const Samples samples = samples_of(self);
  const int64_t* const targets = target.data<const int64_t>();
  plugin::visit_dtype<kernel_dtypes::nll_loss_forward_output>(self.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* const x = self.data<const T>();
    const T* const w = weight != nullptr ? weight->data<const T>() : nullptr;
    T* const loss = output.data<T>();
    double loss_sum = 0;
    double weight_sum = 0;
    for (int64_t i = 0; i < samples.count; ++i) {
      double term = 0;
      if (targets[i] != ignore_index) {
        const int64_t c = checked_class(op, targets[i], samples.classes);
        const double class_weight = w != nullptr ? static_cast<double>(w[c]) : 1.0;
        term = -class_weight * static_cast<double>(x[i * samples.classes + c]);
        weight_sum += class_weight;
      }
      if (reduction == 0) {
        loss[i] = static_cast<T>(term);
      } else {
        loss_sum += term;
      }
    }
    if (reduction != 0) loss[0] = static_cast<T>(reduction == 1 ? loss_sum / weight_sum : loss_sum);
    total_weight.data<T>()[0] = static_cast<T>(reduction == 0 ? 0.0 : weight_sum);
  });
}

// grad_input is 0 but at each sample's target class, where it is -weight[t] times the sample's
// gradient: grad_output's element for the sample without reduction, else its one element,
// divided by total_weight for the mean.
void nll_loss_backward_grad_input(const TensorView& grad_output, const TensorView& self,
                                  const TensorView& target, const TensorView* weight,
                                  int64_t reduction, int64_t ignore_index,
                                  const TensorView& total_weight, const TensorView& grad_input) {
  constexpr std::string_view op = "nll_loss_backward";
  plugin::require_dtypes(op,
                         {{"grad_output", &grad_output},
                          {"weight", weight},
                          {"total_weight", &total_weight},
                          {"grad_input", &grad_input}},
                         self.dtype());
  const Samples samples = samples_of(self);
  const int64_t* const targets = target.data<const int64_t>();
  plugin::visit_dtype<kernel_dtypes::nll_loss_backward_grad_input>(self.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* const g = grad_output.data<const T>();
    const T* const w = weight != nullptr ? weight->data<const T>() : nullptr;
    T* const dx = grad_input.data<T>();
    std::fill_n(dx, grad_input.numel(), static_cast<T>(0.0f));
    const bool per_sample = reduction == 0 && self.dim() == 2;
    const double divisor =
        reduction == 1 ? static_cast<double>(total_weight.data<const T>()[0]) : 1.0;
    for (int64_t i = 0; i < samples.count; ++i) {
      if (targets[i] == ignore_index) continue;
      const int64_t c = checked_class(op, targets[i], samples.classes);
      const double class_weight = w != nullptr ? static_cast<double>(w[c]) : 1.0;
      const double gradient = static_cast<double>(g[per_sample ? i : 0]) / divisor;
      dx[i * samples.classes + c] = static_cast<T>(-class_weight * gradient);
    }
  });
}

}  // namespace bp::cpu
