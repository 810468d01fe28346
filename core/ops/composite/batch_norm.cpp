// batch_norm with PyTorch's schema. Training normalises with the batch's statistics
// (native_batch_norm) and then moves the running statistics toward them, as PyTorch does:
// running = (1 - momentum) * running + momentum * batch statistic, with the unbiased batch
// variance. Inference normalises with the running statistics.
#include <backplane/backplane.h>

#include <core_generated/CompositeFunctions.h>

#include "tensor/shape.h"

#include <fmt/format.h>

namespace bp::composite {

Tensor batch_norm(const Tensor& input, const std::optional<Tensor>& weight,
                  const std::optional<Tensor>& bias, const std::optional<Tensor>& running_mean,
                  const std::optional<Tensor>& running_var, bool training, double momentum,
                  double eps, bool /*cudnn_enabled: a backend choice Backplane makes itself*/) {
  const auto present = [](const std::optional<Tensor>& t) { return t && t->defined(); };
  if (training) {
    const int64_t per_channel =
        input.dim() >= 2 && input.size(1) > 0 ? input.numel() / input.size(1) : input.numel();
    if (per_channel <= 1) {
      throw Error(fmt::format(
          "batch_norm: expected more than 1 value per channel when training, got an input of "
          "shape {}; use a larger batch, or training=false",
          detail::format_shape(input.sizes())));
    }
    // native_batch_norm neither reads nor writes the running statistics in training mode:
    // passing none keeps them out of the autograd graph, which would otherwise hold them while
    // they are updated below.
    auto [out, mean, invstd] = native_batch_norm(input, weight, bias, std::nullopt, std::nullopt,
                                                 /*training=*/true, momentum, eps);
    if (present(running_mean) && present(running_var)) {
      // The statistics are state, not part of the computation that gradients flow through.
      const NoGradGuard no_grad;
      const double unbiasing = static_cast<double>(per_channel) / (per_channel - 1);
      const Tensor one = ones(invstd.sizes(), invstd.dtype(), invstd.device());
      const Tensor biased_variance = sub(div(one, mul(invstd, invstd)), eps);
      // Tensors share their storage: these handles update the caller's statistics in place.
      Tensor running_mean_storage = *running_mean, running_var_storage = *running_var;
      running_mean_storage.mul_(1 - momentum).add_(mean, momentum);
      running_var_storage.mul_(1 - momentum).add_(biased_variance, momentum * unbiasing);
    }
    return out;
  }
  if (!present(running_mean) || !present(running_var)) {
    throw Error(
        "batch_norm: inference mode needs running_mean and running_var; pass the statistics "
        "the model was trained with");
  }
  return batch_norm_inference(input, weight, bias, *running_mean, *running_var, eps);
}

}  // namespace bp::composite
