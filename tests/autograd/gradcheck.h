// Gradient checks: the gradients autograd computes for an op, against central finite
// differences of the op itself, in float64 on the host with PyTorch's gradcheck tolerances.
#pragma once

#include <backplane/backplane.h>

#include <doctest/doctest.h>

#include <cstdint>
#include <functional>
#include <vector>

namespace gradtest {

using bp::Tensor;
using Shape = std::vector<int64_t>;

// How a differentiable input is laid out in memory; its values are the same either way.
enum class Layout {
  Contiguous,
  Transposed,  // the last two dims swapped by a view (needs two dims)
  Strided,     // every other element of a wider tensor
};

struct Input {
  Shape sizes;
  Layout layout = Layout::Contiguous;
  // Values in row-major order; empty: distinct values in [-1, -0.1] U [0.1, 1], away from the
  // kinks of abs, relu and maximum at 0 and from each other.
  std::vector<double> values = {};
};

// Checks every input's gradient of `op`'s output (any shape) against finite differences. `op`
// is called with the inputs as float64 tensors on the host, laid out as each Input says.
// Non-differentiable arguments (indices, conditions) are captured by `op` itself.
void gradcheck(const std::function<Tensor(const std::vector<Tensor>&)>& op,
               const std::vector<Input>& inputs);

// Distinct values for `count` elements, away from 0 (see Input::values), from `seed`.
std::vector<double> sample_values(int64_t count, uint64_t seed);

// A float64 host tensor of `sizes` holding `values`.
Tensor tensor_of(const std::vector<double>& values, const Shape& sizes);

}  // namespace gradtest
