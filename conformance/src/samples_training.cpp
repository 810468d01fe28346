// Optimizer steps: each option of SGD and AdamW, on parameters of a few shapes.
#include "sample_builder.h"

namespace bp::conformance {

namespace {

const std::vector<Shape>& parameter_shapes() {
  static const std::vector<Shape> shapes = {{7}, {3, 4}, {0}, {}};
  return shapes;
}

std::vector<SampleInput> sgd_samples(DType dtype) {
  SampleBuilder b(dtype);
  std::vector<SampleInput> samples;
  struct Options {
    std::string text;
    double momentum, dampening, weight_decay;
    bool nesterov, first_step;
  };
  const std::vector<Options> options = {
      {"plain", 0, 0, 0, false, false},
      {"momentum, first step", 0.9, 0, 0, false, true},
      {"momentum, dampening, weight decay", 0.9, 0.1, 0.01, false, false},
      {"nesterov", 0.9, 0, 0.01, true, false},
  };
  for (const Shape& shape : parameter_shapes()) {
    for (const Options& o : options) {
      samples.push_back(sample(shape_string(shape) + ", " + o.text,
                               {b.tensor(shape), b.tensor(shape), b.tensor(shape), 0.125,
                                o.momentum, o.dampening, o.weight_decay, o.nesterov, o.first_step},
                               {{shape, dtype}, {shape, dtype}}));
    }
  }
  return samples;
}

std::vector<SampleInput> adamw_samples(DType dtype) {
  SampleBuilder b(dtype);
  std::vector<SampleInput> samples;
  for (const Shape& shape : parameter_shapes()) {
    for (const int64_t step : {int64_t{1}, int64_t{10}}) {
      samples.push_back(sample(shape_string(shape) + ", step " + std::to_string(step),
                               {b.tensor(shape), b.tensor(shape), b.tensor(shape),
                                b.positive(shape), 0.01, 0.9, 0.999, 0.01, 1e-8, step},
                               {{shape, dtype}, {shape, dtype}, {shape, dtype}}));
    }
  }
  return samples;
}

}  // namespace

std::vector<OpInfo> training_op_infos() {
  return {
      {"_sgd_step.out", sgd_samples},
      {"_adamw_step.out", adamw_samples},
  };
}

}  // namespace bp::conformance
