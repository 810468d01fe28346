// Reductions and the softmax family: every dim list, keepdim, empty tensors where the op defines
// them, and the special values.
#include "sample_builder.h"

namespace bp::conformance {

namespace {

struct Reduction {
  Shape shape;
  std::vector<int64_t> dims;  // empty: all
};

// Reductions that sum (defined over no elements) and those that pick an element (not).
const std::vector<Reduction>& picking_reductions() {
  static const std::vector<Reduction> reductions = {
      {{7}, {0}},        {{3, 5}, {1}},       {{3, 5}, {0}}, {{3, 5}, {0, 1}},
      {{2, 3, 4}, {-1}}, {{2, 3, 4}, {0, 2}}, {{1, 6}, {1}}, {{0, 3}, {1}},
  };
  return reductions;
}

std::string reduction_text(const Reduction& r, bool keepdim) {
  return shape_string(r.shape) + " over " + shape_string(r.dims) + (keepdim ? ", keepdim" : "");
}

// sum and mean: dim list (None: all), keepdim, dtype=None.
std::vector<SampleInput> summing_samples(DType dtype) {
  SampleBuilder b(dtype);
  std::vector<SampleInput> samples;
  samples.push_back(
      sample("[] over all", {b.tensor({}), std::monostate{}, false, std::monostate{}}));
  samples.push_back(
      sample("[3, 5] over all", {b.tensor({3, 5}), std::monostate{}, false, std::monostate{}}));
  samples.push_back(sample("[0, 3] over [0]",
                           {b.tensor({0, 3}), std::vector<int64_t>{0}, false, std::monostate{}}));
  for (const Reduction& r : picking_reductions()) {
    for (const bool keepdim : {false, true}) {
      samples.push_back(sample(reduction_text(r, keepdim),
                               {b.tensor(r.shape), r.dims, keepdim, std::monostate{}}));
    }
  }
  samples.push_back(sample("special values over all",
                           {b.special_values(), std::monostate{}, false, std::monostate{}}));
  return samples;
}

std::vector<SampleInput> amax_samples(DType dtype) {
  SampleBuilder b(dtype);
  std::vector<SampleInput> samples;
  samples.push_back(sample("[3, 5] over all", {b.tensor({3, 5}), std::vector<int64_t>{}, false}));
  for (const Reduction& r : picking_reductions()) {
    if (r.shape.front() == 0) continue;
    for (const bool keepdim : {false, true}) {
      samples.push_back(sample(reduction_text(r, keepdim), {b.tensor(r.shape), r.dims, keepdim}));
    }
  }
  samples.push_back(sample("special values", {b.special_values(), std::vector<int64_t>{0}, false}));
  return samples;
}

// max.dim and argmax: one dim.
std::vector<SampleInput> one_dim_samples(DType dtype, bool optional_dim) {
  SampleBuilder b(dtype);
  std::vector<SampleInput> samples;
  for (const Reduction& r : picking_reductions()) {
    if (r.dims.size() != 1 || r.shape.front() == 0) continue;
    for (const bool keepdim : {false, true}) {
      samples.push_back(
          sample(reduction_text(r, keepdim), {b.tensor(r.shape), r.dims.front(), keepdim}));
    }
  }
  samples.push_back(sample("special values", {b.special_values(), int64_t{0}, false}));
  if (optional_dim) {
    samples.push_back(sample("[3, 5] over all", {b.tensor({3, 5}), std::monostate{}, false}));
  }
  return samples;
}

std::vector<SampleInput> max_dim_samples(DType dtype) { return one_dim_samples(dtype, false); }
std::vector<SampleInput> argmax_samples(DType dtype) { return one_dim_samples(dtype, true); }

struct SoftmaxCase {
  Shape shape;
  int64_t dim;
};

const std::vector<SoftmaxCase>& softmax_cases() {
  static const std::vector<SoftmaxCase> cases = {
      {{}, 0},         {{7}, 0},       {{3, 5}, 1}, {{3, 5}, 0},
      {{2, 3, 4}, -1}, {{2, 3, 4}, 1}, {{0, 4}, 1}, {{4, 33}, 1},
  };
  return cases;
}

std::vector<SampleInput> softmax_samples(DType dtype) {
  SampleBuilder b(dtype);
  std::vector<SampleInput> samples;
  for (const SoftmaxCase& c : softmax_cases()) {
    samples.push_back(sample(shape_string(c.shape) + " over " + std::to_string(c.dim),
                             {b.tensor(c.shape), c.dim, std::monostate{}}));
  }
  return samples;
}

// The backward ops read the forward op's output, made here on the host.
std::vector<SampleInput> softmax_backward_samples(DType dtype, bool log) {
  SampleBuilder b(dtype);
  std::vector<SampleInput> samples;
  for (const SoftmaxCase& c : softmax_cases()) {
    const Tensor input = b.tensor(c.shape);
    const Tensor output = log ? log_softmax(input, c.dim) : softmax(input, c.dim);
    samples.push_back(sample(shape_string(c.shape) + " over " + std::to_string(c.dim),
                             {b.tensor(c.shape), output, c.dim, dtype}));
  }
  return samples;
}

std::vector<SampleInput> softmax_backward_data_samples(DType dtype) {
  return softmax_backward_samples(dtype, false);
}
std::vector<SampleInput> log_softmax_backward_data_samples(DType dtype) {
  return softmax_backward_samples(dtype, true);
}

}  // namespace

std::vector<OpInfo> reduction_op_infos() {
  return {
      {"sum.IntList_out", summing_samples},
      {"mean.out", summing_samples},
      {"amax.out", amax_samples},
      {"max.dim_max", max_dim_samples},
      {"argmax.out", argmax_samples},
      {"softmax.int_out", softmax_samples},
      {"log_softmax.int_out", softmax_samples},
      {"_softmax_backward_data.out", softmax_backward_data_samples},
      {"_log_softmax_backward_data.out", log_softmax_backward_data_samples},
  };
}

}  // namespace bp::conformance
