// Gathering, scattering, joining, copying and filling: every dim, repeated and boundary
// indices, padding indices, dtype conversions and empty tensors.
#include "sample_builder.h"

namespace bp::conformance {

namespace {

std::vector<SampleInput> embedding_samples(DType dtype) {
  SampleBuilder b(dtype);
  std::vector<SampleInput> samples;
  samples.push_back(
      sample("[10, 4] by [6]", {b.tensor({10, 4}), b.indices({6}, 10), int64_t{-1}, false, false}));
  samples.push_back(sample("[7, 3] by [2, 5]",
                           {b.tensor({7, 3}), b.indices({2, 5}, 7), int64_t{-1}, false, false}));
  samples.push_back(sample("[7, 3] by [2, 5], padding_idx 1",
                           {b.tensor({7, 3}), b.indices({2, 5}, 7), int64_t{1}, false, false}));
  samples.push_back(
      sample("[5, 2] by []", {b.tensor({5, 2}), b.indices({}, 5), int64_t{-1}, false, false}));
  samples.push_back(
      sample("[5, 2] by [0]", {b.tensor({5, 2}), b.indices({0}, 5), int64_t{-1}, false, false}));
  return samples;
}

std::vector<SampleInput> embedding_dense_backward_samples(DType dtype) {
  SampleBuilder b(dtype);
  std::vector<SampleInput> samples;
  for (const bool by_frequency : {false, true}) {
    const std::string suffix = by_frequency ? ", scaled by frequency" : "";
    samples.push_back(
        sample("[6, 4] into 10 rows" + suffix,
               {b.tensor({6, 4}), b.indices({6}, 10), int64_t{10}, int64_t{-1}, by_frequency}));
    samples.push_back(
        sample("[2, 5, 3] into 4 rows, padding_idx 2" + suffix,
               {b.tensor({2, 5, 3}), b.indices({2, 5}, 4), int64_t{4}, int64_t{2}, by_frequency}));
  }
  return samples;
}

std::vector<SampleInput> index_select_samples(DType dtype) {
  SampleBuilder b(dtype);
  std::vector<SampleInput> samples;
  samples.push_back(sample("[5, 3] dim 0", {b.tensor({5, 3}), int64_t{0}, b.indices({7}, 5)}));
  samples.push_back(sample("[5, 3] dim 1", {b.tensor({5, 3}), int64_t{1}, b.indices({4}, 3)}));
  samples.push_back(
      sample("[2, 3, 4] dim -1", {b.tensor({2, 3, 4}), int64_t{-1}, b.indices({2}, 4)}));
  samples.push_back(sample("[5, 3] no indices", {b.tensor({5, 3}), int64_t{0}, b.indices({0}, 5)}));
  samples.push_back(sample("[7] dim 0", {b.tensor({7}), int64_t{0}, b.indices({3}, 7)}));
  return samples;
}

std::vector<SampleInput> index_add_samples(DType dtype) {
  SampleBuilder b(dtype);
  std::vector<SampleInput> samples;
  samples.push_back(sample("[5, 3] dim 0", {b.tensor({5, 3}), int64_t{0}, b.indices({7}, 5),
                                            b.tensor({7, 3}), Scalar(1)}));
  samples.push_back(
      sample("[5, 3] dim 1, alpha 2",
             {b.tensor({5, 3}), int64_t{1}, b.indices({4}, 3), b.tensor({5, 4}), Scalar(2)}));
  samples.push_back(sample("[2, 3, 4] dim 1", {b.tensor({2, 3, 4}), int64_t{1}, b.indices({5}, 3),
                                               b.tensor({2, 5, 4}), Scalar(1)}));
  samples.push_back(sample(
      "[4] no indices", {b.tensor({4}), int64_t{0}, b.indices({0}, 4), b.tensor({0}), Scalar(1)}));
  return samples;
}

std::vector<SampleInput> cat_samples(DType dtype) {
  SampleBuilder b(dtype);
  std::vector<SampleInput> samples;
  const auto list = [&](std::vector<Shape> shapes) {
    std::vector<Tensor> tensors;
    for (const Shape& shape : shapes) tensors.push_back(b.tensor(shape));
    return tensors;
  };
  samples.push_back(sample("[2, 3], [4, 3] dim 0", {list({{2, 3}, {4, 3}}), int64_t{0}}));
  samples.push_back(
      sample("[2, 3], [2, 1], [2, 5] dim 1", {list({{2, 3}, {2, 1}, {2, 5}}), int64_t{1}}));
  samples.push_back(sample("[2, 3, 4] twice dim -1", {list({{2, 3, 4}, {2, 3, 4}}), int64_t{-1}}));
  samples.push_back(sample("[0, 3], [2, 3] dim 0", {list({{0, 3}, {2, 3}}), int64_t{0}}));
  samples.push_back(sample("one [5]", {list({{5}}), int64_t{0}}));
  return samples;
}

// copy_ writes its `self` whole: the sample names it as an output of the source's shape.
std::vector<SampleInput> copy_samples(DType dtype) {
  SampleBuilder b(dtype);
  std::vector<SampleInput> samples;
  for (const Shape& shape : elementwise_shapes()) {
    samples.push_back(sample(shape_string(shape), {b.tensor(shape), false}, {{shape, dtype}}));
  }
  for (const DType from : {kFloat32, kInt64, kBool}) {
    if (from == dtype) continue;
    samples.push_back(sample("[3, 4] from " + std::string(dtype_name(from)),
                             {b.tensor({3, 4}, from), false}, {{{3, 4}, dtype}}));
  }
  samples.push_back(sample("[4] into [3, 4]", {b.tensor({4}), false}, {{{3, 4}, dtype}}));
  return samples;
}

std::vector<SampleInput> fill_samples(DType dtype) {
  const Scalar value = dtype == kBool             ? Scalar(true)
                       : is_floating_point(dtype) ? Scalar(-2.5)
                                                  : Scalar(7);
  std::vector<SampleInput> samples;
  for (const Shape& shape : elementwise_shapes()) {
    samples.push_back(sample(shape_string(shape), {value}, {{shape, dtype}}));
  }
  return samples;
}

std::vector<SampleInput> arange_samples(DType dtype) {
  const bool floating = is_floating_point(dtype);
  std::vector<SampleInput> samples;
  samples.push_back(sample("0 to 10", {Scalar(0), Scalar(10), Scalar(1)}, {{{0}, dtype}}));
  samples.push_back(sample("-3 to 17 by 4", {Scalar(-3), Scalar(17), Scalar(4)}, {{{0}, dtype}}));
  samples.push_back(
      sample("10 down to 0 by -3", {Scalar(10), Scalar(0), Scalar(-3)}, {{{0}, dtype}}));
  samples.push_back(sample("5 to 5", {Scalar(5), Scalar(5), Scalar(1)}, {{{0}, dtype}}));
  if (floating) {
    samples.push_back(
        sample("0 to 2 by 0.25", {Scalar(0.0), Scalar(2.0), Scalar(0.25)}, {{{0}, dtype}}));
  }
  return samples;
}

}  // namespace

std::vector<OpInfo> indexing_op_infos() {
  return {
      {"embedding.out", embedding_samples},
      {"embedding_dense_backward.out", embedding_dense_backward_samples},
      {"index_select.out", index_select_samples},
      {"index_add.out", index_add_samples},
      {"cat.out", cat_samples},
      {"copy_", copy_samples},
      {"fill_.Scalar", fill_samples},
      {"arange.start_out", arange_samples},
  };
}

}  // namespace bp::conformance
