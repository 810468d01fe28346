// Elementwise ops: every edge shape, broadcasting, and the special values.
#include "sample_builder.h"

namespace bp::conformance {

namespace {

// Each elementwise shape with itself, the broadcasting pairs, and the special values against
// themselves reversed; `extra` follows the two tensors (alpha, approximate, ...).
std::vector<SampleInput> binary_samples(DType dtype, const std::vector<ArgumentValue>& extra) {
  SampleBuilder b(dtype);
  std::vector<SampleInput> samples;
  const auto arguments = [&](Tensor x, Tensor y) {
    std::vector<ArgumentValue> values = {std::move(x), std::move(y)};
    values.insert(values.end(), extra.begin(), extra.end());
    return OpArguments(std::move(values));
  };
  for (const Shape& shape : elementwise_shapes()) {
    samples.push_back(sample(shape_string(shape), arguments(b.tensor(shape), b.tensor(shape))));
  }
  for (const auto& [x, y] : broadcast_shapes()) {
    samples.push_back(sample("broadcast " + shape_string(x) + " with " + shape_string(y),
                             arguments(b.tensor(x), b.tensor(y))));
  }
  samples.push_back(
      sample("special values", arguments(b.special_values(), b.special_values(/*reversed=*/true))));
  return samples;
}

std::vector<SampleInput> unary_samples(DType dtype, const std::vector<ArgumentValue>& extra) {
  SampleBuilder b(dtype);
  std::vector<SampleInput> samples;
  const auto arguments = [&](Tensor x) {
    std::vector<ArgumentValue> values = {std::move(x)};
    values.insert(values.end(), extra.begin(), extra.end());
    return OpArguments(std::move(values));
  };
  for (const Shape& shape : elementwise_shapes()) {
    samples.push_back(sample(shape_string(shape), arguments(b.tensor(shape))));
  }
  samples.push_back(sample("special values", arguments(b.special_values())));
  return samples;
}

Scalar alpha_for(DType dtype) { return dtype == kBool ? Scalar(true) : Scalar(2); }

std::vector<SampleInput> add_samples(DType dtype) {
  std::vector<SampleInput> samples = binary_samples(dtype, {Scalar(1)});
  for (SampleInput& s : binary_samples(dtype, {alpha_for(dtype)})) {
    s.description += ", alpha=" + std::string(dtype == kBool ? "True" : "2");
    samples.push_back(std::move(s));
  }
  return samples;
}

std::vector<SampleInput> sub_samples(DType dtype) {
  return binary_samples(dtype, {alpha_for(dtype)});
}

std::vector<SampleInput> plain_binary_samples(DType dtype) { return binary_samples(dtype, {}); }

std::vector<SampleInput> where_samples(DType dtype) {
  SampleBuilder b(dtype);
  std::vector<SampleInput> samples;
  for (const Shape& shape : elementwise_shapes()) {
    samples.push_back(
        sample(shape_string(shape), {b.bools(shape), b.tensor(shape), b.tensor(shape)}));
  }
  samples.push_back(
      sample("broadcast [3, 1], [4], [1, 4]", {b.bools({3, 1}), b.tensor({4}), b.tensor({1, 4})}));
  return samples;
}

std::vector<SampleInput> plain_unary_samples(DType dtype) { return unary_samples(dtype, {}); }

std::vector<SampleInput> gelu_samples(DType dtype) {
  std::vector<SampleInput> samples = unary_samples(dtype, {std::string("none")});
  for (SampleInput& s : unary_samples(dtype, {std::string("tanh")})) {
    s.description += ", approximate='tanh'";
    samples.push_back(std::move(s));
  }
  return samples;
}

std::vector<SampleInput> threshold_backward_samples(DType dtype) {
  std::vector<SampleInput> samples = binary_samples(dtype, {Scalar(0)});
  for (SampleInput& s : binary_samples(dtype, {Scalar(0.5)})) {
    s.description += ", threshold=0.5";
    samples.push_back(std::move(s));
  }
  return samples;
}

std::vector<SampleInput> gelu_backward_samples(DType dtype) {
  std::vector<SampleInput> samples = binary_samples(dtype, {std::string("none")});
  for (SampleInput& s : binary_samples(dtype, {std::string("tanh")})) {
    s.description += ", approximate='tanh'";
    samples.push_back(std::move(s));
  }
  return samples;
}

}  // namespace

std::vector<OpInfo> elementwise_op_infos() {
  return {
      {"add.out", add_samples},
      {"sub.out", sub_samples},
      {"mul.out", plain_binary_samples},
      {"div.out", plain_binary_samples},
      {"maximum.out", plain_binary_samples},
      {"minimum.out", plain_binary_samples},
      {"eq.Tensor_out", plain_binary_samples},
      {"lt.Tensor_out", plain_binary_samples},
      {"gt.Tensor_out", plain_binary_samples},
      {"where.self_out", where_samples},
      {"neg.out", plain_unary_samples},
      {"abs.out", plain_unary_samples},
      {"exp.out", plain_unary_samples},
      {"log.out", plain_unary_samples},
      {"sqrt.out", plain_unary_samples},
      {"tanh.out", plain_unary_samples},
      {"sigmoid.out", plain_unary_samples},
      {"relu.out", plain_unary_samples},
      {"silu.out", plain_unary_samples},
      {"gelu.out", gelu_samples},
      {"threshold_backward.grad_input", threshold_backward_samples},
      {"gelu_backward.grad_input", gelu_backward_samples},
  };
}

}  // namespace bp::conformance
