// The networks of layouts.h on libtorch, and a training step over them: the twins of
// backplane_networks.h, op for op.
#pragma once

#include "layouts.h"

#include <torch/torch.h>

#include <cstdint>
#include <vector>

namespace networks {

// Float32 leaves that require grad, started as `layout` says from libtorch's generator.
std::vector<torch::Tensor> torch_parameters(const std::vector<ParameterLayout>& layout);

class TorchMlp {
 public:
  explicit TorchMlp(const std::vector<int64_t>& widths);
  torch::Tensor forward(const torch::Tensor& input);
  const std::vector<torch::Tensor>& parameters() const { return parameters_; }

 private:
  std::vector<torch::Tensor> parameters_;
};

class TorchDigitsCnn {
 public:
  TorchDigitsCnn();
  torch::Tensor forward(const torch::Tensor& images);
  const std::vector<torch::Tensor>& parameters() const { return parameters_; }
  const std::vector<torch::Tensor>& buffers() const { return buffers_; }

 private:
  torch::Tensor norm(const torch::Tensor& input, size_t index);

  std::vector<torch::Tensor> parameters_;
  std::vector<torch::Tensor> buffers_;
};

// BackplaneTraining's twin: forward, cross_entropy, zero_grad, backward, torch.optim.AdamW.
template <typename Network>
class TorchTraining {
 public:
  TorchTraining(Network network, torch::Tensor inputs, torch::Tensor labels)
      : network_(std::move(network)),
        optimizer_(network_.parameters(), torch::optim::AdamWOptions(1e-3)),
        inputs_(std::move(inputs)),
        labels_(std::move(labels)) {}

  void step() {
    const torch::Tensor loss = torch::cross_entropy_loss(network_.forward(inputs_), labels_);
    optimizer_.zero_grad();
    loss.backward();
    optimizer_.step();
  }

 private:
  Network network_;
  torch::optim::AdamW optimizer_;
  torch::Tensor inputs_;
  torch::Tensor labels_;
};

torch::Tensor torch_random_inputs(int64_t batch, const std::vector<int64_t>& input_sizes);
torch::Tensor torch_random_labels(int64_t batch, int64_t classes);

}  // namespace networks
