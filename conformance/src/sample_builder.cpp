#include "sample_builder.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace bp::conformance {

Tensor SampleBuilder::tensor(const Shape& sizes, DType dtype) {
  return make_tensor(sample_values(numel_of(sizes), dtype, seed_++), sizes, dtype, Device::cpu());
}

Tensor SampleBuilder::positive(const Shape& sizes) {
  Values values = sample_values(numel_of(sizes), dtype_, seed_++);
  for (double& v : values) v = std::abs(v) + 0.5;
  return make_tensor(values, sizes, dtype_, Device::cpu());
}

Tensor SampleBuilder::indices(const Shape& sizes, int64_t bound) {
  Values values = sample_values(numel_of(sizes), kInt64, seed_++);
  for (double& v : values) v = static_cast<double>(static_cast<int64_t>(std::abs(v)) % bound);
  return make_tensor(values, sizes, kInt64, Device::cpu());
}

Tensor SampleBuilder::special_values(bool reversed) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  Values values = {1.5, -2.5, 0.0, 3.0, -1.0};
  if (is_floating()) {
    values.insert(values.end(), {std::numeric_limits<double>::quiet_NaN(), kInf, -kInf, -0.0, 1e4,
                                 -1e4, 1e30, 1e-30});
  }
  for (double& v : values) v = stored_as(dtype_, v);
  if (reversed) std::reverse(values.begin(), values.end());
  return make_tensor(values, {static_cast<int64_t>(values.size())}, dtype_, Device::cpu());
}

const std::vector<Shape>& elementwise_shapes() {
  static const std::vector<Shape> shapes = {{}, {0}, {1}, {7}, {3, 5}, {2, 3, 4}, {0, 3}};
  return shapes;
}

const std::vector<std::pair<Shape, Shape>>& broadcast_shapes() {
  static const std::vector<std::pair<Shape, Shape>> pairs = {
      {{3, 1}, {4}}, {{2, 1, 4}, {3, 1}}, {{}, {3, 4}}, {{5}, {}}, {{0, 3}, {3}}, {{1}, {2, 0}},
  };
  return pairs;
}

}  // namespace bp::conformance
