// cross_entropy_loss with class indices as targets, as PyTorch defines it: nll_loss of
// log_softmax over the classes (dim 1 of [N, C], the only dim of [C]). With label smoothing e
// the loss is (1 - e) * nll_loss + e / C * smooth, where a sample's smooth term is minus its
// log-probabilities summed over every class (each times its class weight), 0 for a sample whose
// target is ignore_index, reduced as the loss is; the mean divides by the summed weight of the
// samples not ignored, as nll_loss's does.
#include <backplane/backplane.h>

#include <fmt/format.h>

#include <tuple>

namespace bp {

Tensor cross_entropy_loss(const Tensor& self, const Tensor& target,
                          const std::optional<Tensor>& weight, int64_t reduction,
                          int64_t ignore_index, double label_smoothing) {
  if (!(label_smoothing >= 0 && label_smoothing <= 1)) {
    throw Error(fmt::format("cross_entropy_loss: label_smoothing must be in [0, 1], got {}",
                            label_smoothing));
  }
  const int64_t class_dim = self.dim() == 2 ? 1 : 0;
  const Tensor log_probabilities = log_softmax(self, class_dim);
  auto [loss, total_weight] =
      nll_loss_forward(log_probabilities, target, weight, reduction, ignore_index);
  if (label_smoothing == 0) return loss;

  const bool weighted = weight && weight->defined();
  const Tensor weighted_log_probabilities =
      weighted ? mul(log_probabilities, weight->to(log_probabilities.dtype()))
               : log_probabilities;
  const int64_t dims[] = {class_dim};
  Tensor smooth = neg(sum(weighted_log_probabilities, IntArrayRef(dims)));
  smooth = where(eq(target, ignore_index),
                 scalar_tensor(0, smooth.dtype(), smooth.device()), smooth);
  if (reduction == 1) {
    smooth = div(sum(smooth), total_weight);
  } else if (reduction == 2) {
    smooth = sum(smooth);
  }
  const auto classes = static_cast<double>(self.size(class_dim));
  return add(mul(loss, 1 - label_smoothing), mul(smooth, label_smoothing / classes));
}

}  // namespace bp
