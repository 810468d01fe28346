// samples/train_digits's CNN (conv2d, batch_norm in training mode, relu, max_pool2d, linear,
// cross_entropy) on Backplane's CPU backend against libtorch, on the same float32 weights and
// data: the gradient of every parameter, the batch norms' running statistics, and one AdamW
// step.
#include "backplane_networks.h"
#include "host_copy.h"
#include "torch_networks.h"

#include <doctest/doctest.h>

namespace {

using torch_parity::check_close;
using torch_parity::copy_values;
using torch_parity::to_torch;

constexpr int64_t kBatch = 16;

// Both networks with the same parameters, and one batch of digit-sized images for them.
struct Twins {
  Twins() {
    bp::manual_seed(2);
    copy_values(ours.parameters(), theirs.parameters());
    images = networks::backplane_random_inputs(kBatch,
                                               {1, networks::kDigitsSide, networks::kDigitsSide});
    labels = networks::backplane_random_labels(kBatch, networks::kDigitsClasses);
  }

  // The loss of each network on the batch, after its backward pass.
  std::pair<bp::Tensor, torch::Tensor> losses_after_backward() {
    const bp::Tensor loss = bp::cross_entropy_loss(ours.forward(images), labels);
    loss.backward();
    const torch::Tensor torch_loss =
        torch::cross_entropy_loss(theirs.forward(to_torch(images)), to_torch(labels));
    torch_loss.backward();
    return {loss, torch_loss};
  }

  networks::BackplaneDigitsCnn ours;
  networks::TorchDigitsCnn theirs;
  bp::Tensor images;
  bp::Tensor labels;
};

TEST_CASE("a CNN with batch norm in training mode: every gradient matches libtorch's") {
  Twins twins;
  const auto [loss, torch_loss] = twins.losses_after_backward();

  check_close("loss", loss, torch_loss);
  const std::vector<networks::ParameterLayout> layout = networks::digits_cnn_layout();
  for (size_t i = 0; i < layout.size(); ++i) {
    check_close(layout[i].name + ".grad", twins.ours.parameters()[i].grad(),
                twins.theirs.parameters()[i].grad());
  }
}

TEST_CASE("a CNN's batch norms update their running statistics as libtorch's") {
  Twins twins;
  twins.losses_after_backward();

  const std::vector<std::string> names = networks::digits_cnn_buffer_names();
  for (size_t i = 0; i < names.size(); ++i) {
    check_close(names[i], twins.ours.buffers()[i], twins.theirs.buffers()[i]);
  }
}

TEST_CASE("one AdamW step moves a CNN's parameters as torch.optim.AdamW does") {
  Twins twins;
  bp::optim::AdamW optimizer(twins.ours.parameters(), {});
  torch::optim::AdamW torch_optimizer(twins.theirs.parameters(), torch::optim::AdamWOptions(1e-3));
  twins.losses_after_backward();
  optimizer.step();
  torch_optimizer.step();

  const std::vector<networks::ParameterLayout> layout = networks::digits_cnn_layout();
  for (size_t i = 0; i < layout.size(); ++i) {
    check_close(layout[i].name, twins.ours.parameters()[i], twins.theirs.parameters()[i]);
  }
}

}  // namespace
