// What the sample generators (src/samples_*.cpp) build their cases with.
#pragma once

#include <backplane/conformance/op_info.h>

#include <string>
#include <utility>
#include <vector>

namespace bp::conformance {

// Makes the tensors of one dtype's cases, each with values of its own.
class SampleBuilder {
 public:
  explicit SampleBuilder(DType dtype) : dtype_(dtype) {}

  DType dtype() const { return dtype_; }
  bool is_floating() const { return is_floating_point(dtype_); }

  Tensor tensor(const Shape& sizes) { return tensor(sizes, dtype_); }
  Tensor tensor(const Shape& sizes, DType dtype);
  // Values in [0.5, 4.5]: variances, divisors.
  Tensor positive(const Shape& sizes);
  // Int64 values in [0, bound).
  Tensor indices(const Shape& sizes, int64_t bound);
  // A one-dimensional tensor of the values that matter to elementwise ops: NaN, +-inf, -0,
  // large magnitudes, and ordinary values (only the ordinary ones for integer dtypes); reversed,
  // so that a binary op meets each value with others.
  Tensor special_values(bool reversed = false);
  Tensor bools(const Shape& sizes) { return tensor(sizes, kBool); }

 private:
  DType dtype_;
  uint64_t seed_ = 1;
};

inline SampleInput sample(std::string description, OpArguments arguments,
                          std::vector<TensorSpec> outputs = {}) {
  return {std::move(description), std::move(arguments), std::move(outputs), true};
}

// The shapes every elementwise op is tried on: a 0-dim tensor, empty ones, one element, and
// a few dims.
const std::vector<Shape>& elementwise_shapes();
// Pairs of shapes that broadcast against each other.
const std::vector<std::pair<Shape, Shape>>& broadcast_shapes();

// The generators of each family of ops, which op_infos() joins.
std::vector<OpInfo> elementwise_op_infos();
std::vector<OpInfo> reduction_op_infos();
std::vector<OpInfo> normalization_op_infos();
std::vector<OpInfo> spatial_op_infos();
std::vector<OpInfo> linalg_op_infos();
std::vector<OpInfo> indexing_op_infos();
std::vector<OpInfo> training_op_infos();

}  // namespace bp::conformance
