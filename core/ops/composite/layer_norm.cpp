// layer_norm with PyTorch's schema: the normalised input that native_layer_norm computes, without
// the per-group mean and reciprocal standard deviation it returns beside it.
#include <backplane/backplane.h>

#include <core_generated/CompositeFunctions.h>

#include <tuple>

namespace bp::composite {

Tensor layer_norm(const Tensor& input, IntArrayRef normalized_shape,
                  const std::optional<Tensor>& weight, const std::optional<Tensor>& bias,
                  double eps, bool /*cudnn_enable: a backend choice Backplane makes itself*/) {
  return std::get<0>(native_layer_norm(input, normalized_shape, weight, bias, eps));
}

}  // namespace bp::composite
