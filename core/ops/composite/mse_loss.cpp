// mse_loss with PyTorch's schema: the squared differences of self and target (broadcast
// together), reduced by their mean (reduction 1), their sum (2) or not at all (0).
#include <backplane/backplane.h>

#include <fmt/format.h>

namespace bp {

Tensor mse_loss(const Tensor& self, const Tensor& target, int64_t reduction) {
  if (reduction < 0 || reduction > 2) {
    throw Error(fmt::format("mse_loss: reduction must be 0 (none), 1 (mean) or 2 (sum), got {}",
                            reduction));
  }
  const Tensor difference = sub(self, target);
  const Tensor squares = mul(difference, difference);
  if (reduction == 1) return mean(squares);
  if (reduction == 2) return sum(squares);
  return squares;
}

}  // namespace bp
