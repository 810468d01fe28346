#include "model.h"

#include <cmath>

namespace {

// Uniform values in [-bound, bound): PyTorch's kaiming_uniform_ with a = sqrt(5), its default
// for weights, and its bias initialisation both come to bound = 1 / sqrt(fan_in).
bp::Tensor uniform_parameter(bp::IntArrayRef sizes, int64_t fan_in, bp::Device device) {
  const double bound = 1.0 / std::sqrt(static_cast<double>(fan_in));
  bp::Tensor values = (bp::rand(sizes, bp::kFloat32, bp::Device::cpu()) * (2 * bound) - bound);
  return values.to(device).requires_grad_();
}

bp::Tensor filled(bp::IntArrayRef sizes, float value, bp::Device device) {
  return bp::full(sizes, value, bp::kFloat32, device);
}

}  // namespace

DigitsNet::BatchNorm::BatchNorm(int64_t channels, bp::Device device)
    : weight(filled({channels}, 1, device).requires_grad_()),
      bias(filled({channels}, 0, device).requires_grad_()),
      running_mean(filled({channels}, 0, device)),
      running_var(filled({channels}, 1, device)) {}

bp::Tensor DigitsNet::BatchNorm::forward(const bp::Tensor& input, bool training) {
  return bp::batch_norm(input, weight, bias, running_mean, running_var, training,
                        /*momentum=*/0.1, /*eps=*/1e-5, /*cudnn_enabled=*/false);
}

DigitsNet::DigitsNet(bp::Device device)
    : conv1_(uniform_parameter({16, 1, 3, 3}, 1 * 3 * 3, device)),
      norm1_(16, device),
      conv2_(uniform_parameter({32, 16, 3, 3}, 16 * 3 * 3, device)),
      norm2_(32, device),
      fc1_weight_(uniform_parameter({64, 32 * 2 * 2}, 32 * 2 * 2, device)),
      fc1_bias_(uniform_parameter({64}, 32 * 2 * 2, device)),
      fc2_weight_(uniform_parameter({10, 64}, 64, device)),
      fc2_bias_(uniform_parameter({10}, 64, device)) {}

bp::Tensor DigitsNet::forward(const bp::Tensor& images, bool training) {
  // [N, 1, 8, 8] -> [N, 16, 4, 4] -> [N, 32, 2, 2]
  bp::Tensor x = bp::conv2d(images, conv1_, std::nullopt, /*stride=*/{1, 1}, /*padding=*/{1, 1});
  x = bp::max_pool2d(bp::relu(norm1_.forward(x, training)), /*kernel_size=*/{2, 2});
  x = bp::conv2d(x, conv2_, std::nullopt, {1, 1}, {1, 1});
  x = bp::max_pool2d(bp::relu(norm2_.forward(x, training)), {2, 2});
  x = bp::relu(bp::linear(bp::flatten(x, 1), fc1_weight_, fc1_bias_));
  return bp::linear(x, fc2_weight_, fc2_bias_);
}

std::vector<bp::Tensor> DigitsNet::buffers() const {
  return {norm1_.running_mean, norm1_.running_var, norm2_.running_mean, norm2_.running_var};
}

std::vector<bp::Tensor> DigitsNet::parameters() const {
  return {conv1_,      norm1_.weight, norm1_.bias, conv2_,      norm2_.weight,
          norm2_.bias, fc1_weight_,   fc1_bias_,   fc2_weight_, fc2_bias_};
}
