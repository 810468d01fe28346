// Layer, RMS and batch normalisation, forward and backward, with and without their optional
// weights; a backward op's saved statistics come from its forward op on the host.
#include "sample_builder.h"

namespace bp::conformance {

namespace {

constexpr double kEps = 1e-5;

struct LayerNormCase {
  Shape input;
  std::vector<int64_t> normalized;
};

const std::vector<LayerNormCase>& layer_norm_cases() {
  static const std::vector<LayerNormCase> cases = {
      {{2, 3, 4}, {4}}, {{2, 3, 4}, {3, 4}}, {{5, 8}, {8}},
      {{3}, {3}},       {{0, 4}, {4}},       {{4, 1}, {1}},
  };
  return cases;
}

std::string layer_norm_text(const LayerNormCase& c, bool affine) {
  return shape_string(c.input) + " over " + shape_string(c.normalized) +
         (affine ? ", weight and bias" : "");
}

std::vector<SampleInput> layer_norm_samples(DType dtype) {
  SampleBuilder b(dtype);
  std::vector<SampleInput> samples;
  for (const LayerNormCase& c : layer_norm_cases()) {
    samples.push_back(
        sample(layer_norm_text(c, false),
               {b.tensor(c.input), c.normalized, std::monostate{}, std::monostate{}, kEps}));
    samples.push_back(sample(
        layer_norm_text(c, true),
        {b.tensor(c.input), c.normalized, b.tensor(c.normalized), b.tensor(c.normalized), kEps}));
  }
  return samples;
}

std::vector<SampleInput> layer_norm_backward_samples(DType dtype) {
  SampleBuilder b(dtype);
  std::vector<SampleInput> samples;
  for (const LayerNormCase& c : layer_norm_cases()) {
    for (const bool affine : {false, true}) {
      const Tensor input = b.tensor(c.input);
      std::optional<Tensor> weight, bias;
      if (affine) {
        weight = b.tensor(c.normalized);
        bias = b.tensor(c.normalized);
      }
      const auto [output, mean, rstd] = native_layer_norm(input, c.normalized, weight, bias, kEps);
      const auto optional = [](const std::optional<Tensor>& t) -> ArgumentValue {
        if (t) return *t;
        return std::monostate{};
      };
      samples.push_back(sample(
          layer_norm_text(c, affine),
          {b.tensor(c.input), input, c.normalized, mean, rstd, optional(weight), optional(bias)}));
    }
  }
  return samples;
}

std::vector<SampleInput> rms_norm_samples(DType dtype) {
  SampleBuilder b(dtype);
  std::vector<SampleInput> samples;
  for (const LayerNormCase& c : layer_norm_cases()) {
    samples.push_back(sample(layer_norm_text(c, false), {b.tensor(c.input), c.normalized,
                                                         std::monostate{}, std::monostate{}}));
    samples.push_back(sample(layer_norm_text(c, true) + ", eps=0.01",
                             {b.tensor(c.input), c.normalized, b.tensor(c.normalized), 0.01}));
  }
  return samples;
}

// Batch normalisation inputs: [N, C, ...] with C = 3.
const std::vector<Shape>& batch_norm_shapes() {
  static const std::vector<Shape> shapes = {{4, 3}, {2, 3, 5}, {2, 3, 4, 4}, {1, 3, 2, 2}};
  return shapes;
}

ArgumentValue maybe(bool present, const Tensor& t) {
  if (present) return t;
  return std::monostate{};
}

std::vector<SampleInput> batch_norm_inference_samples(DType dtype) {
  SampleBuilder b(dtype);
  std::vector<SampleInput> samples;
  for (const Shape& shape : batch_norm_shapes()) {
    for (const bool affine : {false, true}) {
      samples.push_back(
          sample(shape_string(shape) + (affine ? ", weight and bias" : ""),
                 {b.tensor(shape), maybe(affine, b.tensor({3})), maybe(affine, b.tensor({3})),
                  b.tensor({3}), b.positive({3}), kEps}));
    }
  }
  return samples;
}

std::vector<SampleInput> native_batch_norm_samples(DType dtype) {
  SampleBuilder b(dtype);
  std::vector<SampleInput> samples;
  for (const Shape& shape : batch_norm_shapes()) {
    for (const bool training : {true, false}) {
      samples.push_back(sample(shape_string(shape) + (training ? ", training" : ", inference"),
                               {b.tensor(shape), b.tensor({3}), b.tensor({3}), b.tensor({3}),
                                b.positive({3}), training, 0.1, kEps}));
    }
    samples.push_back(sample(shape_string(shape) + ", training without running statistics",
                             {b.tensor(shape), std::monostate{}, std::monostate{}, std::monostate{},
                              std::monostate{}, true, 0.1, kEps}));
  }
  return samples;
}

std::vector<SampleInput> native_batch_norm_backward_samples(DType dtype) {
  SampleBuilder b(dtype);
  std::vector<SampleInput> samples;
  for (const Shape& shape : batch_norm_shapes()) {
    const Tensor input = b.tensor(shape);
    const Tensor weight = b.tensor({3});
    const Tensor running_mean = b.tensor({3});
    const Tensor running_var = b.positive({3});
    const auto [output, save_mean, save_invstd] =
        native_batch_norm(input, weight, std::nullopt, std::nullopt, std::nullopt, true, 0.1, kEps);
    samples.push_back(sample(shape_string(shape) + ", training",
                             {b.tensor(shape), input, weight, std::monostate{}, std::monostate{},
                              save_mean, save_invstd, true, kEps}));
    samples.push_back(sample(shape_string(shape) + ", inference",
                             {b.tensor(shape), input, weight, running_mean, running_var,
                              std::monostate{}, std::monostate{}, false, kEps}));
  }
  return samples;
}

}  // namespace

std::vector<OpInfo> normalization_op_infos() {
  return {
      {"native_layer_norm.out", layer_norm_samples},
      {"native_layer_norm_backward.out", layer_norm_backward_samples},
      {"rms_norm.out", rms_norm_samples},
      {"batch_norm_inference.out", batch_norm_inference_samples},
      {"native_batch_norm.out", native_batch_norm_samples},
      {"native_batch_norm_backward.out", native_batch_norm_backward_samples},
  };
}

}  // namespace bp::conformance
