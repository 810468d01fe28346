// A BERT encoder for inference (no embeddings: it takes the hidden states), written once over a
// library's layer calls (Ops: static functions on Ops::Tensor, models_vs_torch_bench.cpp) so
// that Backplane and libtorch run the same network. Each layer is post-LN as in BERT:
//   x = layer_norm(x + attention(x)),  x = layer_norm(x + linear(gelu(linear(x))))
// with exact (erf) GELU. The query, key and value projections are one linear of 3 * hidden
// outputs; Ops::attention splits its result into heads, attends and merges the heads again.
#pragma once

#include "model_weights.h"

#include <cmath>
#include <cstdint>
#include <vector>

namespace bench::bert {

inline constexpr double kNormEps = 1e-12;

struct Config {
  int64_t layers = 12;
  int64_t hidden = 768;
  int64_t heads = 12;
  int64_t feed_forward = 3072;
};

template <typename T>
struct Layer {
  T qkv_weight, qkv_bias;  // [3 * hidden, hidden]: query, key and value stacked
  T output_weight, output_bias;
  T attention_norm_weight, attention_norm_bias;
  T up_weight, up_bias;      // [feed_forward, hidden]
  T down_weight, down_bias;  // [hidden, feed_forward]
  T output_norm_weight, output_norm_bias;
};

template <typename T>
using Encoder = std::vector<Layer<T>>;

inline Encoder<HostTensor> random_encoder(const Config& config, uint64_t seed) {
  WeightGenerator generator(seed);
  // PyTorch's default for nn.Linear, which keeps the scores of attention O(1).
  const auto linear_weight = [&](int64_t out, int64_t in) {
    const double bound = 1.0 / std::sqrt(static_cast<double>(in));
    return generator.uniform({out, in}, -bound, bound);
  };
  const auto bias = [&](int64_t size) { return generator.normal({size}, 0.0, 0.1); };
  const auto norm_weight = [&](int64_t size) { return generator.uniform({size}, 0.5, 1.5); };
  const int64_t hidden = config.hidden, wide = config.feed_forward;
  Encoder<HostTensor> encoder;
  for (int64_t i = 0; i < config.layers; ++i) {
    encoder.push_back(
        {linear_weight(3 * hidden, hidden), bias(3 * hidden), linear_weight(hidden, hidden),
         bias(hidden), norm_weight(hidden), bias(hidden), linear_weight(wide, hidden), bias(wide),
         linear_weight(hidden, wide), bias(hidden), norm_weight(hidden), bias(hidden)});
  }
  return encoder;
}

// `host` with each weight made into a library's tensor by `make`.
template <typename T, typename Make>
Encoder<T> convert(const Encoder<HostTensor>& host, const Make& make) {
  Encoder<T> encoder;
  for (const Layer<HostTensor>& l : host) {
    encoder.push_back({make(l.qkv_weight), make(l.qkv_bias), make(l.output_weight),
                       make(l.output_bias), make(l.attention_norm_weight),
                       make(l.attention_norm_bias), make(l.up_weight), make(l.up_bias),
                       make(l.down_weight), make(l.down_bias), make(l.output_norm_weight),
                       make(l.output_norm_bias)});
  }
  return encoder;
}

// Hidden states [batch, sequence, hidden] after every layer of `encoder`.
template <typename Ops>
typename Ops::Tensor forward(const Encoder<typename Ops::Tensor>& encoder, int64_t heads,
                             const typename Ops::Tensor& input) {
  using Tensor = typename Ops::Tensor;
  const int64_t batch = input.size(0), sequence = input.size(1), hidden = input.size(2);
  Tensor x = input.reshape({batch * sequence, hidden});
  for (const Layer<Tensor>& l : encoder) {
    const Tensor context = Ops::attention(Ops::linear(x, l.qkv_weight, l.qkv_bias), batch, heads);
    x = Ops::layer_norm(Ops::add_(Ops::linear(context, l.output_weight, l.output_bias), x),
                        l.attention_norm_weight, l.attention_norm_bias, kNormEps);
    const Tensor wide = Ops::gelu(Ops::linear(x, l.up_weight, l.up_bias));
    x = Ops::layer_norm(Ops::add_(Ops::linear(wide, l.down_weight, l.down_bias), x),
                        l.output_norm_weight, l.output_norm_bias, kNormEps);
  }
  return x.reshape({batch, sequence, hidden});
}

}  // namespace bench::bert
