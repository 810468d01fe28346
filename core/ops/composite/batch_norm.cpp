// batch_norm with PyTorch's schema, in inference mode: the running statistics normalise the
// input, so there is nothing to update and momentum is not read.
#include <backplane/backplane.h>

#include <core_generated/CompositeFunctions.h>

namespace bp::composite {

Tensor batch_norm(const Tensor& input, const std::optional<Tensor>& weight,
                  const std::optional<Tensor>& bias, const std::optional<Tensor>& running_mean,
                  const std::optional<Tensor>& running_var, bool training, double /*momentum*/,
                  double eps, bool /*cudnn_enabled: a backend choice Backplane makes itself*/) {
  if (training) {
    throw Error(
        "batch_norm: training=true is not supported; Backplane normalises with the running "
        "statistics (inference mode): pass training=false");
  }
  const auto present = [](const std::optional<Tensor>& t) { return t && t->defined(); };
  if (!present(running_mean) || !present(running_var)) {
    throw Error(
        "batch_norm: inference mode needs running_mean and running_var; pass the statistics "
        "the model was trained with");
  }
  return batch_norm_inference(input, weight, bias, *running_mean, *running_var, eps);
}

}  // namespace bp::composite
