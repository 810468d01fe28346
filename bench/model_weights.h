// Weights of the whole-model benchmarks (resnet18.h, bert_encoder.h) as host float vectors, drawn
// once from a seeded generator, so that both libraries are handed the same numbers.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

namespace bench {

struct HostTensor {
  std::vector<int64_t> sizes;
  std::vector<float> values;
};

class WeightGenerator {
 public:
  explicit WeightGenerator(uint64_t seed) : engine_(seed) {}

  HostTensor normal(std::vector<int64_t> sizes, double mean, double deviation) {
    std::normal_distribution<float> draw(static_cast<float>(mean), static_cast<float>(deviation));
    return fill(std::move(sizes), draw);
  }
  HostTensor uniform(std::vector<int64_t> sizes, double low, double high) {
    std::uniform_real_distribution<float> draw(static_cast<float>(low), static_cast<float>(high));
    return fill(std::move(sizes), draw);
  }
  // Uniform with the variance of Kaiming's normal for ReLU (2 / fan_in), times gain squared: at
  // gain 1 a convolution followed by ReLU keeps its input's scale through many layers.
  HostTensor kaiming(std::vector<int64_t> sizes, int64_t fan_in, double gain = 1.0) {
    const double bound = gain * std::sqrt(6.0 / static_cast<double>(fan_in));
    return uniform(std::move(sizes), -bound, bound);
  }

 private:
  template <typename Distribution>
  HostTensor fill(std::vector<int64_t> sizes, Distribution& draw) {
    int64_t count = 1;
    for (const int64_t size : sizes) count *= size;
    HostTensor tensor{std::move(sizes), std::vector<float>(static_cast<size_t>(count))};
    for (float& value : tensor.values) value = draw(engine_);
    return tensor;
  }

  std::mt19937_64 engine_;
};

}  // namespace bench
