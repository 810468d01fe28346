// The networks that tests/torch_parity and the training benchmarks build on both Backplane
// (backplane_networks.h) and libtorch (torch_networks.h): their parameters in order, with the
// shape and starting values PyTorch's layers give them, so that both sides build the same thing.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace networks {

// How a parameter starts. kUniform is PyTorch's default for linear and conv weights and biases
// (kaiming_uniform_ with a = sqrt(5), and the bias rule): uniform in +-1 / sqrt(fan_in).
enum class Start { kUniform, kOnes, kZeros };

struct ParameterLayout {
  std::string name;
  std::vector<int64_t> sizes;
  Start start;
  int64_t fan_in = 0;  // kUniform only
};

// linear, relu, linear, relu, ..., linear: widths[0] inputs, widths.back() outputs; a weight
// and a bias per layer ("layer1.weight", "layer1.bias", ...).
std::vector<ParameterLayout> mlp_layout(const std::vector<int64_t>& widths);

// samples/train_digits's network on [N, 1, 8, 8] images:
//   conv 1->16 3x3 pad 1 (no bias), batch norm, relu, max pool 2    -> [N, 16, 4, 4]
//   conv 16->32 3x3 pad 1 (no bias), batch norm, relu, max pool 2   -> [N, 32, 2, 2]
//   flatten, linear 128->64, relu, linear 64->10
// Parameters in that order: conv1.weight, bn1.weight, bn1.bias, conv2.weight, bn2.weight,
// bn2.bias, fc1.weight, fc1.bias, fc2.weight, fc2.bias.
std::vector<ParameterLayout> digits_cnn_layout();

inline constexpr int64_t kDigitsSide = 8;
inline constexpr int64_t kDigitsClasses = 10;
// The channels of the two batch norms, whose running statistics are the network's buffers.
inline constexpr int64_t kDigitsCnnNormChannels[] = {16, 32};
// nn.BatchNorm2d's defaults.
inline constexpr double kBatchNormMomentum = 0.1;
inline constexpr double kBatchNormEps = 1e-5;

// The names of the running statistics, in the order the networks' buffers() list them.
std::vector<std::string> digits_cnn_buffer_names();

}  // namespace networks
