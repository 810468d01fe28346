// The networks of layouts.h on Backplane, and a training step over them.
#pragma once

#include "layouts.h"

#include <backplane/backplane.h>
#include <backplane/optim.h>

#include <cstdint>
#include <vector>

namespace networks {

// Float32 leaves that require grad, on the host, started as `layout` says from Backplane's
// generator (bp::manual_seed).
std::vector<bp::Tensor> backplane_parameters(const std::vector<ParameterLayout>& layout);

class BackplaneMlp {
 public:
  explicit BackplaneMlp(const std::vector<int64_t>& widths);
  bp::Tensor forward(const bp::Tensor& input);
  const std::vector<bp::Tensor>& parameters() const { return parameters_; }

 private:
  std::vector<bp::Tensor> parameters_;
};

// Its batch norms run in training mode: they normalise by the batch's statistics and update
// their running statistics.
class BackplaneDigitsCnn {
 public:
  BackplaneDigitsCnn();
  bp::Tensor forward(const bp::Tensor& images);
  const std::vector<bp::Tensor>& parameters() const { return parameters_; }
  // Running mean and variance of each batch norm (digits_cnn_buffer_names()).
  const std::vector<bp::Tensor>& buffers() const { return buffers_; }

 private:
  bp::Tensor norm(const bp::Tensor& input, size_t index);

  std::vector<bp::Tensor> parameters_;
  std::vector<bp::Tensor> buffers_;
};

// One training step on one fixed batch: forward, cross_entropy, zero_grad, backward, and an
// AdamW step with its defaults (lr 1e-3, weight decay 1e-2).
template <typename Network>
class BackplaneTraining {
 public:
  BackplaneTraining(Network network, bp::Tensor inputs, bp::Tensor labels)
      : network_(std::move(network)),
        optimizer_(network_.parameters(), {}),
        inputs_(std::move(inputs)),
        labels_(std::move(labels)) {}

  void step() {
    const bp::Tensor loss = bp::cross_entropy_loss(network_.forward(inputs_), labels_);
    optimizer_.zero_grad();
    loss.backward();
    optimizer_.step();
  }

 private:
  Network network_;
  bp::optim::AdamW optimizer_;
  bp::Tensor inputs_;
  bp::Tensor labels_;
};

// A batch of `batch` random inputs shaped [batch, input_sizes...] and class labels below
// `classes`, from Backplane's generator.
bp::Tensor backplane_random_inputs(int64_t batch, const std::vector<int64_t>& input_sizes);
bp::Tensor backplane_random_labels(int64_t batch, int64_t classes);

}  // namespace networks
