// A two-layer MLP's gradients from Backplane's autograd on the CPU backend against libtorch's
// autograd, on the same float32 weights and data.
#include "backplane_networks.h"
#include "host_copy.h"
#include "torch_networks.h"

#include <doctest/doctest.h>

namespace {

using torch_parity::check_close;
using torch_parity::copy_values;
using torch_parity::to_torch;

TEST_CASE("linear, relu, linear, cross_entropy: every gradient matches libtorch's") {
  bp::manual_seed(1);
  const std::vector<int64_t> widths{48, 64, 10};
  const int64_t batch = 16;
  networks::BackplaneMlp ours(widths);
  networks::TorchMlp theirs(widths);
  copy_values(ours.parameters(), theirs.parameters());
  const bp::Tensor inputs = networks::backplane_random_inputs(batch, {widths.front()});
  const bp::Tensor labels = networks::backplane_random_labels(batch, widths.back());

  const bp::Tensor loss = bp::cross_entropy_loss(ours.forward(inputs), labels);
  loss.backward();
  const torch::Tensor torch_loss =
      torch::cross_entropy_loss(theirs.forward(to_torch(inputs)), to_torch(labels));
  torch_loss.backward();

  check_close("loss", loss, torch_loss);
  const std::vector<networks::ParameterLayout> layout = networks::mlp_layout(widths);
  for (size_t i = 0; i < layout.size(); ++i) {
    check_close(layout[i].name + ".grad", ours.parameters()[i].grad(),
                theirs.parameters()[i].grad());
  }
}

}  // namespace
