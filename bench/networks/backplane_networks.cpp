#include "backplane_networks.h"

#include <cmath>

namespace networks {

std::vector<bp::Tensor> backplane_parameters(const std::vector<ParameterLayout>& layout) {
  std::vector<bp::Tensor> parameters;
  for (const ParameterLayout& p : layout) {
    bp::Tensor value;
    switch (p.start) {
      case Start::kUniform: {
        const double bound = 1.0 / std::sqrt(static_cast<double>(p.fan_in));
        value = bp::rand(p.sizes, bp::kFloat32, bp::Device::cpu()) * (2 * bound) - bound;
        break;
      }
      case Start::kOnes: value = bp::ones(p.sizes, bp::kFloat32, bp::Device::cpu()); break;
      case Start::kZeros: value = bp::zeros(p.sizes, bp::kFloat32, bp::Device::cpu()); break;
    }
    parameters.push_back(value.requires_grad_());
  }
  return parameters;
}

BackplaneMlp::BackplaneMlp(const std::vector<int64_t>& widths)
    : parameters_(backplane_parameters(mlp_layout(widths))) {}

bp::Tensor BackplaneMlp::forward(const bp::Tensor& input) {
  bp::Tensor x = input;
  const size_t layers = parameters_.size() / 2;
  for (size_t i = 0; i < layers; ++i) {
    x = bp::linear(x, parameters_[2 * i], parameters_[2 * i + 1]);
    if (i + 1 < layers) x = bp::relu(x);
  }
  return x;
}

BackplaneDigitsCnn::BackplaneDigitsCnn() : parameters_(backplane_parameters(digits_cnn_layout())) {
  for (const int64_t channels : kDigitsCnnNormChannels) {
    buffers_.push_back(bp::zeros({channels}, bp::kFloat32, bp::Device::cpu()));
    buffers_.push_back(bp::ones({channels}, bp::kFloat32, bp::Device::cpu()));
  }
}

bp::Tensor BackplaneDigitsCnn::norm(const bp::Tensor& input, size_t index) {
  return bp::batch_norm(input, parameters_[1 + 3 * index], parameters_[2 + 3 * index],
                        buffers_[2 * index], buffers_[2 * index + 1], /*training=*/true,
                        kBatchNormMomentum, kBatchNormEps, /*cudnn_enabled=*/false);
}

bp::Tensor BackplaneDigitsCnn::forward(const bp::Tensor& images) {
  bp::Tensor x = bp::conv2d(images, parameters_[0], std::nullopt, /*stride=*/{1, 1},
                            /*padding=*/{1, 1});
  x = bp::max_pool2d(bp::relu(norm(x, 0)), /*kernel_size=*/{2, 2});
  x = bp::conv2d(x, parameters_[3], std::nullopt, {1, 1}, {1, 1});
  x = bp::max_pool2d(bp::relu(norm(x, 1)), {2, 2});
  x = bp::relu(bp::linear(bp::flatten(x, 1), parameters_[6], parameters_[7]));
  return bp::linear(x, parameters_[8], parameters_[9]);
}

bp::Tensor backplane_random_inputs(int64_t batch, const std::vector<int64_t>& input_sizes) {
  std::vector<int64_t> sizes{batch};
  sizes.insert(sizes.end(), input_sizes.begin(), input_sizes.end());
  return bp::randn(sizes, bp::kFloat32, bp::Device::cpu());
}

bp::Tensor backplane_random_labels(int64_t batch, int64_t classes) {
  const bp::Tensor uniform = bp::rand({batch}, bp::kFloat64, bp::Device::cpu());
  std::vector<int64_t> labels;
  for (const double u : uniform.to_vector<double>()) {
    labels.push_back(static_cast<int64_t>(u * static_cast<double>(classes)));
  }
  return bp::from_vector(labels, {batch});
}

}  // namespace networks
