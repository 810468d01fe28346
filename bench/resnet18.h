// ResNet-18 for inference, written once over a library's layer calls (Ops: static functions on
// Ops::Tensor, models_vs_torch_bench.cpp) so that Backplane and libtorch run the same network:
// conv1 7x7/2 + batch norm + relu + max pool 3x3/2, four stages of two BasicBlocks (64, 128, 256
// and 512 channels; every stage but the first starts with stride 2 and a 1x1 convolution + batch
// norm on the identity path), global average pooling, fc 512 -> 1000. Convolutions have no bias;
// batch norm uses its running statistics.
#pragma once

#include "model_weights.h"

#include <cmath>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace bench::resnet18 {

inline constexpr double kNormEps = 1e-5;
inline constexpr int64_t kChannels = 3;
inline constexpr int64_t kClasses = 1000;

// A convolution and the batch norm after it.
template <typename T>
struct ConvNorm {
  T weight;  // [out, in, kernel, kernel]
  T norm_weight, norm_bias, running_mean, running_var;
  int64_t stride = 1;
  int64_t padding = 0;
};

template <typename T>
struct Block {
  ConvNorm<T> first, second;
  std::optional<ConvNorm<T>> downsample;  // where the block changes the shape
};

template <typename T>
struct Network {
  ConvNorm<T> stem;
  std::vector<Block<T>> blocks;
  T fc_weight, fc_bias;
};

// Weights at `gain` times Kaiming's scale and random statistics a trained network could have.
inline ConvNorm<HostTensor> random_conv_norm(WeightGenerator& generator, int64_t in, int64_t out,
                                             int64_t kernel, int64_t stride, double gain = 1.0) {
  return {generator.kaiming({out, in, kernel, kernel}, in * kernel * kernel, gain),
          generator.uniform({out}, 0.5, 1.5),
          generator.normal({out}, 0.0, 0.1),
          generator.normal({out}, 0.0, 0.1),
          generator.uniform({out}, 0.5, 1.5),
          stride,
          kernel / 2};
}

// The two paths that each block adds end in convolutions at half Kaiming's scale, so that their
// sum keeps the block's input scale: at full scale its variance would grow by 1.5-2x a block, to
// activations of 100 and more before the classifier.
inline constexpr double kPathGain = 0.5;

inline Network<HostTensor> random_network(uint64_t seed) {
  WeightGenerator generator(seed);
  Network<HostTensor> network;
  network.stem = random_conv_norm(generator, kChannels, 64, 7, 2);
  int64_t in = 64;
  for (const int64_t out : {64, 128, 256, 512}) {
    for (int repeat = 0; repeat < 2; ++repeat) {
      const int64_t stride = repeat == 0 && out != 64 ? 2 : 1;
      Block<HostTensor> block{random_conv_norm(generator, in, out, 3, stride),
                              random_conv_norm(generator, out, out, 3, 1, kPathGain), std::nullopt};
      if (stride != 1 || in != out)
        block.downsample = random_conv_norm(generator, in, out, 1, stride, kPathGain);
      network.blocks.push_back(std::move(block));
      in = out;
    }
  }
  const double bound = 1.0 / std::sqrt(static_cast<double>(in));
  network.fc_weight = generator.uniform({kClasses, in}, -bound, bound);
  network.fc_bias = generator.uniform({kClasses}, -bound, bound);
  return network;
}

// `host` with each weight made into a library's tensor by `make`.
template <typename T, typename Make>
Network<T> convert(const Network<HostTensor>& host, const Make& make) {
  const auto conv_norm = [&](const ConvNorm<HostTensor>& layer) {
    return ConvNorm<T>{make(layer.weight),
                       make(layer.norm_weight),
                       make(layer.norm_bias),
                       make(layer.running_mean),
                       make(layer.running_var),
                       layer.stride,
                       layer.padding};
  };
  Network<T> network{conv_norm(host.stem), {}, make(host.fc_weight), make(host.fc_bias)};
  for (const Block<HostTensor>& block : host.blocks) {
    Block<T> converted{conv_norm(block.first), conv_norm(block.second), std::nullopt};
    if (block.downsample) converted.downsample = conv_norm(*block.downsample);
    network.blocks.push_back(std::move(converted));
  }
  return network;
}

// Logits [N, 1000] of images [N, 3, H, W].
template <typename Ops>
typename Ops::Tensor forward(const Network<typename Ops::Tensor>& network,
                             const typename Ops::Tensor& images) {
  using Tensor = typename Ops::Tensor;
  const auto conv_norm = [](const ConvNorm<Tensor>& layer, const Tensor& x) {
    return Ops::batch_norm(Ops::conv2d(x, layer.weight, layer.stride, layer.padding),
                           layer.norm_weight, layer.norm_bias, layer.running_mean,
                           layer.running_var, kNormEps);
  };
  Tensor x = Ops::max_pool2d(Ops::relu_(conv_norm(network.stem, images)));
  for (const Block<Tensor>& block : network.blocks) {
    const Tensor out = conv_norm(block.second, Ops::relu_(conv_norm(block.first, x)));
    x = Ops::relu_(Ops::add_(out, block.downsample ? conv_norm(*block.downsample, x) : x));
  }
  return Ops::linear(Ops::global_average_pool(x), network.fc_weight, network.fc_bias);
}

}  // namespace bench::resnet18
