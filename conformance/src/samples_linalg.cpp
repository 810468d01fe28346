// Matrix products: square, tall, wide, empty inner and outer dims, vectors as rows, and
// addmm's broadcast bias, scaling and fused activation.
#include "sample_builder.h"

namespace bp::conformance {

namespace {

struct MatmulCase {
  int64_t m, k, n;
};

const std::vector<MatmulCase>& matmul_cases() {
  static const std::vector<MatmulCase> cases = {
      {3, 4, 5}, {1, 1, 1}, {17, 9, 33}, {1, 64, 1}, {0, 3, 4}, {3, 0, 4}, {65, 3, 2},
  };
  return cases;
}

std::string matmul_text(const MatmulCase& c) {
  return shape_string({c.m, c.k}) + " @ " + shape_string({c.k, c.n});
}

std::vector<SampleInput> mm_samples(DType dtype) {
  SampleBuilder b(dtype);
  std::vector<SampleInput> samples;
  for (const MatmulCase& c : matmul_cases()) {
    samples.push_back(sample(matmul_text(c), {b.tensor({c.m, c.k}), b.tensor({c.k, c.n})}));
  }
  return samples;
}

std::vector<SampleInput> bmm_samples(DType dtype) {
  SampleBuilder b(dtype);
  std::vector<SampleInput> samples;
  for (const MatmulCase& c : matmul_cases()) {
    samples.push_back(
        sample("3 x " + matmul_text(c), {b.tensor({3, c.m, c.k}), b.tensor({3, c.k, c.n})}));
  }
  samples.push_back(sample("0 batches", {b.tensor({0, 2, 3}), b.tensor({0, 3, 4})}));
  return samples;
}

std::vector<SampleInput> addmm_like_samples(DType dtype, bool activation) {
  SampleBuilder b(dtype);
  std::vector<SampleInput> samples;
  const bool integral = !b.is_floating();
  const Scalar beta = integral ? Scalar(2) : Scalar(0.5);
  const Scalar alpha = integral ? Scalar(3) : Scalar(1.5);
  for (const MatmulCase& c : matmul_cases()) {
    const auto arguments = [&](Shape bias, Scalar beta_value, Scalar alpha_value, bool gelu) {
      std::vector<ArgumentValue> values = {b.tensor(bias), b.tensor({c.m, c.k}),
                                           b.tensor({c.k, c.n}), beta_value, alpha_value};
      if (activation) values.push_back(gelu);
      return OpArguments(std::move(values));
    };
    samples.push_back(
        sample(matmul_text(c) + " + [m, n]", arguments({c.m, c.n}, Scalar(1), Scalar(1), false)));
    samples.push_back(
        sample(matmul_text(c) + " + [n], beta and alpha", arguments({c.n}, beta, alpha, false)));
    if (activation) {
      samples.push_back(
          sample(matmul_text(c) + " + [n], gelu", arguments({c.n}, Scalar(1), Scalar(1), true)));
    }
  }
  return samples;
}

std::vector<SampleInput> addmm_samples(DType dtype) { return addmm_like_samples(dtype, false); }
std::vector<SampleInput> addmm_activation_samples(DType dtype) {
  return addmm_like_samples(dtype, true);
}

}  // namespace

std::vector<OpInfo> linalg_op_infos() {
  return {
      {"mm.out", mm_samples},
      {"bmm.out", bmm_samples},
      {"addmm.out", addmm_samples},
      {"_addmm_activation.out", addmm_activation_samples},
  };
}

}  // namespace bp::conformance
