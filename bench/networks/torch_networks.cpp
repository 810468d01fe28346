#include "torch_networks.h"

#include <cmath>

namespace networks {

std::vector<torch::Tensor> torch_parameters(const std::vector<ParameterLayout>& layout) {
  std::vector<torch::Tensor> parameters;
  for (const ParameterLayout& p : layout) {
    torch::Tensor value;
    switch (p.start) {
      case Start::kUniform: {
        const double bound = 1.0 / std::sqrt(static_cast<double>(p.fan_in));
        value = torch::empty(p.sizes).uniform_(-bound, bound);
        break;
      }
      case Start::kOnes: value = torch::ones(p.sizes); break;
      case Start::kZeros: value = torch::zeros(p.sizes); break;
    }
    parameters.push_back(value.requires_grad_());
  }
  return parameters;
}

TorchMlp::TorchMlp(const std::vector<int64_t>& widths)
    : parameters_(torch_parameters(mlp_layout(widths))) {}

torch::Tensor TorchMlp::forward(const torch::Tensor& input) {
  torch::Tensor x = input;
  const size_t layers = parameters_.size() / 2;
  for (size_t i = 0; i < layers; ++i) {
    x = torch::linear(x, parameters_[2 * i], parameters_[2 * i + 1]);
    if (i + 1 < layers) x = torch::relu(x);
  }
  return x;
}

TorchDigitsCnn::TorchDigitsCnn() : parameters_(torch_parameters(digits_cnn_layout())) {
  for (const int64_t channels : kDigitsCnnNormChannels) {
    buffers_.push_back(torch::zeros({channels}));
    buffers_.push_back(torch::ones({channels}));
  }
}

torch::Tensor TorchDigitsCnn::norm(const torch::Tensor& input, size_t index) {
  return torch::batch_norm(input, parameters_[1 + 3 * index], parameters_[2 + 3 * index],
                           buffers_[2 * index], buffers_[2 * index + 1], /*training=*/true,
                           kBatchNormMomentum, kBatchNormEps, /*cudnn_enabled=*/false);
}

torch::Tensor TorchDigitsCnn::forward(const torch::Tensor& images) {
  torch::Tensor x = torch::conv2d(images, parameters_[0], {}, /*stride=*/1, /*padding=*/1);
  x = torch::max_pool2d(torch::relu(norm(x, 0)), /*kernel_size=*/2);
  x = torch::conv2d(x, parameters_[3], {}, 1, 1);
  x = torch::max_pool2d(torch::relu(norm(x, 1)), 2);
  x = torch::relu(torch::linear(torch::flatten(x, 1), parameters_[6], parameters_[7]));
  return torch::linear(x, parameters_[8], parameters_[9]);
}

torch::Tensor torch_random_inputs(int64_t batch, const std::vector<int64_t>& input_sizes) {
  std::vector<int64_t> sizes{batch};
  sizes.insert(sizes.end(), input_sizes.begin(), input_sizes.end());
  return torch::randn(sizes);
}

torch::Tensor torch_random_labels(int64_t batch, int64_t classes) {
  return torch::randint(classes, {batch}, torch::kLong);
}

}  // namespace networks
