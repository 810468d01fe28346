// Convolution, pooling, attention and the losses: strides, padding, dilation, groups, ceil
// mode and the optional arguments; a backward op's gradient has its forward op's output shape
// (computed on the host), and pooling indices come from the forward op.
#include "sample_builder.h"

namespace bp::conformance {

namespace {

using Pair = std::vector<int64_t>;

struct ConvCase {
  std::string text;
  Shape input, weight;
  Pair stride, padding, dilation;
  int64_t groups;
};

const std::vector<ConvCase>& conv_cases() {
  static const std::vector<ConvCase> cases = {
      {"3x3, padding 1", {2, 3, 6, 6}, {4, 3, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 1},
      {"3x3, stride 2", {1, 2, 7, 7}, {3, 2, 3, 3}, {2, 2}, {0, 0}, {1, 1}, 1},
      {"3x3, dilation 2, padding 2", {1, 2, 7, 5}, {2, 2, 3, 3}, {1, 1}, {2, 2}, {2, 2}, 1},
      {"groups 2", {2, 4, 5, 5}, {6, 2, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 2},
      {"depthwise", {1, 3, 5, 5}, {3, 1, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 3},
      {"1x1", {2, 5, 3, 4}, {4, 5, 1, 1}, {1, 1}, {0, 0}, {1, 1}, 1},
      {"2x3 kernel, stride (1, 2)", {1, 2, 6, 7}, {3, 2, 2, 3}, {1, 2}, {1, 0}, {1, 1}, 1},
  };
  return cases;
}

std::vector<SampleInput> conv2d_samples(DType dtype) {
  SampleBuilder b(dtype);
  std::vector<SampleInput> samples;
  for (const ConvCase& c : conv_cases()) {
    samples.push_back(sample(c.text, {b.tensor(c.input), b.tensor(c.weight), std::monostate{},
                                      c.stride, c.padding, c.dilation, c.groups}));
    samples.push_back(
        sample(c.text + ", bias", {b.tensor(c.input), b.tensor(c.weight), b.tensor({c.weight[0]}),
                                   c.stride, c.padding, c.dilation, c.groups}));
  }
  return samples;
}

std::vector<SampleInput> convolution_backward_samples(DType dtype) {
  SampleBuilder b(dtype);
  std::vector<SampleInput> samples;
  for (const ConvCase& c : conv_cases()) {
    const Tensor input = b.tensor(c.input);
    const Tensor weight = b.tensor(c.weight);
    const Shape output =
        conv2d(input, weight, std::nullopt, c.stride, c.padding, c.dilation, c.groups)
            .sizes()
            .vec();
    samples.push_back(sample(
        c.text, {b.tensor(output), input, weight, c.stride, c.padding, c.dilation, c.groups}));
  }
  return samples;
}

struct PoolCase {
  std::string text;
  Shape input;
  Pair kernel, stride, padding, dilation;
  bool ceil_mode;
};

const std::vector<PoolCase>& pool_cases() {
  static const std::vector<PoolCase> cases = {
      {"2x2", {2, 3, 6, 6}, {2, 2}, {2, 2}, {0, 0}, {1, 1}, false},
      {"3x3, stride 2, padding 1", {1, 2, 7, 7}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, false},
      {"3x3, stride 2, ceil mode", {1, 2, 6, 6}, {3, 3}, {2, 2}, {0, 0}, {1, 1}, true},
      {"2x3, stride (1, 2)", {1, 1, 5, 7}, {2, 3}, {1, 2}, {1, 1}, {1, 1}, false},
      {"2x2, stride 1", {3, 2, 5, 5}, {2, 2}, {1, 1}, {0, 0}, {1, 1}, false},
  };
  return cases;
}

// max_pool2d.out has no functional overload: its out= tensor has no elements and is resized.
std::vector<SampleInput> max_pool2d_samples(DType dtype) {
  SampleBuilder b(dtype);
  std::vector<SampleInput> samples;
  for (const PoolCase& c : pool_cases()) {
    samples.push_back(
        sample(c.text, {b.tensor(c.input), c.kernel, c.stride, c.padding, c.dilation, c.ceil_mode},
               {{{0}, dtype}}));
  }
  samples.push_back(sample(
      "dilation 2", {b.tensor({1, 1, 7, 7}), Pair{2, 2}, Pair{1, 1}, Pair{0, 0}, Pair{2, 2}, false},
      {{{0}, dtype}}));
  return samples;
}

std::vector<SampleInput> max_pool2d_with_indices_samples(DType dtype) {
  SampleBuilder b(dtype);
  std::vector<SampleInput> samples;
  for (const PoolCase& c : pool_cases()) {
    samples.push_back(sample(
        c.text, {b.tensor(c.input), c.kernel, c.stride, c.padding, c.dilation, c.ceil_mode}));
  }
  return samples;
}

std::vector<SampleInput> max_pool2d_with_indices_backward_samples(DType dtype) {
  SampleBuilder b(dtype);
  std::vector<SampleInput> samples;
  for (const PoolCase& c : pool_cases()) {
    const Tensor input = b.tensor(c.input);
    const auto [output, indices] =
        max_pool2d_with_indices(input, c.kernel, c.stride, c.padding, c.dilation, c.ceil_mode);
    // The indices belong to `input` as it is: a view of other values would not match them.
    SampleInput s = sample(c.text, {b.tensor(output.sizes().vec()), input, c.kernel, c.stride,
                                    c.padding, c.dilation, c.ceil_mode, indices});
    s.layouts = false;
    samples.push_back(std::move(s));
  }
  return samples;
}

std::vector<SampleInput> avg_pool2d_samples(DType dtype) {
  SampleBuilder b(dtype);
  std::vector<SampleInput> samples;
  for (const PoolCase& c : pool_cases()) {
    samples.push_back(sample(c.text, {b.tensor(c.input), c.kernel, c.stride, c.padding, c.ceil_mode,
                                      true, std::monostate{}}));
    samples.push_back(sample(
        c.text + ", padding not counted",
        {b.tensor(c.input), c.kernel, c.stride, c.padding, c.ceil_mode, false, std::monostate{}}));
  }
  samples.push_back(sample("divisor 3", {b.tensor({1, 2, 4, 4}), Pair{2, 2}, Pair{2, 2}, Pair{0, 0},
                                         false, true, int64_t{3}}));
  return samples;
}

std::vector<SampleInput> avg_pool2d_backward_samples(DType dtype) {
  SampleBuilder b(dtype);
  std::vector<SampleInput> samples;
  for (const PoolCase& c : pool_cases()) {
    for (const bool count_include_pad : {true, false}) {
      const Tensor input = b.tensor(c.input);
      const Shape output =
          avg_pool2d(input, c.kernel, c.stride, c.padding, c.ceil_mode, count_include_pad)
              .sizes()
              .vec();
      samples.push_back(sample(c.text + (count_include_pad ? "" : ", padding not counted"),
                               {b.tensor(output), input, c.kernel, c.stride, c.padding, c.ceil_mode,
                                count_include_pad, std::monostate{}}));
    }
  }
  return samples;
}

struct AdaptiveCase {
  Shape input;
  Pair output;
};

const std::vector<AdaptiveCase>& adaptive_cases() {
  static const std::vector<AdaptiveCase> cases = {
      {{2, 3, 6, 6}, {1, 1}},
      {{1, 2, 7, 5}, {3, 2}},
      {{1, 2, 4, 4}, {4, 4}},
      {{2, 3, 5, 5}, {2, 3}},
  };
  return cases;
}

std::string adaptive_text(const AdaptiveCase& c) {
  return shape_string(c.input) + " to " + shape_string(c.output);
}

std::vector<SampleInput> adaptive_avg_pool2d_samples(DType dtype) {
  SampleBuilder b(dtype);
  std::vector<SampleInput> samples;
  for (const AdaptiveCase& c : adaptive_cases()) {
    samples.push_back(sample(adaptive_text(c), {b.tensor(c.input), c.output}));
  }
  return samples;
}

std::vector<SampleInput> adaptive_avg_pool2d_backward_samples(DType dtype) {
  SampleBuilder b(dtype);
  std::vector<SampleInput> samples;
  for (const AdaptiveCase& c : adaptive_cases()) {
    Shape grad = c.input;
    grad[grad.size() - 2] = c.output[0];
    grad[grad.size() - 1] = c.output[1];
    samples.push_back(sample(adaptive_text(c), {b.tensor(grad), b.tensor(c.input)}));
  }
  return samples;
}

std::vector<SampleInput> attention_samples(DType dtype) {
  SampleBuilder b(dtype);
  std::vector<SampleInput> samples;
  struct Case {
    std::string text;
    Shape query, key, value;
  };
  const std::vector<Case> cases = {
      {"[2, 3, 5, 8] self-attention", {2, 3, 5, 8}, {2, 3, 5, 8}, {2, 3, 5, 8}},
      {"4 queries, 7 keys", {1, 2, 4, 8}, {1, 2, 7, 8}, {1, 2, 7, 4}},
      {"3-dim", {2, 6, 16}, {2, 6, 16}, {2, 6, 16}},
      {"one query", {1, 1, 1, 4}, {1, 1, 9, 4}, {1, 1, 9, 4}},
  };
  for (const Case& c : cases) {
    for (const bool causal : {false, true}) {
      samples.push_back(sample(
          c.text + (causal ? ", causal" : ""),
          {b.tensor(c.query), b.tensor(c.key), b.tensor(c.value), causal, std::monostate{}}));
    }
    samples.push_back(sample(c.text + ", scale 0.25",
                             {b.tensor(c.query), b.tensor(c.key), b.tensor(c.value), false, 0.25}));
  }
  return samples;
}

constexpr int64_t kIgnoreIndex = -100;

struct NllCase {
  std::string text;
  Shape input;
  int64_t reduction;  // 0 none, 1 mean, 2 sum
  bool weighted;
  bool ignores;  // a target holds the ignore index
};

const std::vector<NllCase>& nll_cases() {
  static const std::vector<NllCase> cases = {
      {"mean", {6, 4}, 1, false, false},
      {"sum", {6, 4}, 2, false, false},
      {"none", {6, 4}, 0, false, false},
      {"mean, weighted", {5, 3}, 1, true, false},
      {"mean, one ignored", {5, 3}, 1, false, true},
      {"none, weighted, one ignored", {5, 3}, 0, true, true},
      {"one sample", {1, 7}, 1, false, false},
  };
  return cases;
}

struct NllInputs {
  Tensor input, target;
  ArgumentValue weight;
};

NllInputs nll_inputs(SampleBuilder& b, const NllCase& c) {
  Tensor target = b.indices({c.input[0]}, c.input[1]);
  if (c.ignores) {
    Values values = values_of(target);
    values[1] = kIgnoreIndex;
    target = make_tensor(values, {c.input[0]}, kInt64, Device::cpu());
  }
  return {log_softmax(b.tensor(c.input), 1), target,
          c.weighted ? ArgumentValue(b.positive({c.input[1]})) : ArgumentValue(std::monostate{})};
}

// The targets and the total weight belong together, so the inputs keep their layout.
std::vector<SampleInput> nll_loss_forward_samples(DType dtype) {
  SampleBuilder b(dtype);
  std::vector<SampleInput> samples;
  for (const NllCase& c : nll_cases()) {
    const NllInputs in = nll_inputs(b, c);
    samples.push_back(sample(c.text, {in.input, in.target, in.weight, c.reduction, kIgnoreIndex}));
  }
  return samples;
}

std::vector<SampleInput> nll_loss_backward_samples(DType dtype) {
  SampleBuilder b(dtype);
  std::vector<SampleInput> samples;
  for (const NllCase& c : nll_cases()) {
    const NllInputs in = nll_inputs(b, c);
    const std::optional<Tensor> weight =
        c.weighted ? std::optional<Tensor>(std::get<Tensor>(in.weight)) : std::nullopt;
    const auto [output, total_weight] =
        nll_loss_forward(in.input, in.target, weight, c.reduction, kIgnoreIndex);
    SampleInput s = sample(c.text, {b.tensor(output.sizes().vec()), in.input, in.target, in.weight,
                                    c.reduction, kIgnoreIndex, total_weight});
    s.layouts = false;
    samples.push_back(std::move(s));
  }
  return samples;
}

}  // namespace

std::vector<OpInfo> spatial_op_infos() {
  return {
      {"conv2d.out", conv2d_samples},
      {"convolution_backward.out", convolution_backward_samples},
      {"max_pool2d.out", max_pool2d_samples},
      {"max_pool2d_with_indices.out", max_pool2d_with_indices_samples},
      {"max_pool2d_with_indices_backward.grad_input", max_pool2d_with_indices_backward_samples},
      {"avg_pool2d.out", avg_pool2d_samples},
      {"avg_pool2d_backward.grad_input", avg_pool2d_backward_samples},
      {"adaptive_avg_pool2d.out", adaptive_avg_pool2d_samples},
      {"_adaptive_avg_pool2d_backward.out", adaptive_avg_pool2d_backward_samples},
      {"_scaled_dot_product_fused_attention.out", attention_samples},
      {"nll_loss_forward.output", nll_loss_forward_samples},
      {"nll_loss_backward.grad_input", nll_loss_backward_samples},
  };
}

}  // namespace bp::conformance
