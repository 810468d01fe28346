// nll_loss with PyTorch's schema: nll_loss_forward's loss, without the total weight it returns
// beside it.
#include <backplane/backplane.h>

#include <tuple>

namespace bp {

Tensor nll_loss(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight,
                int64_t reduction, int64_t ignore_index) {
  return std::get<0>(nll_loss_forward(self, target, weight, reduction, ignore_index));
}

}  // namespace bp
