#include "gradcheck.h"

#include <cmath>
#include <numeric>
#include <sstream>

namespace gradtest {

namespace {

// PyTorch's gradcheck defaults (torch.autograd.gradcheck: eps, atol, rtol).
constexpr double kEps = 1e-6;
constexpr double kAtol = 1e-5;
constexpr double kRtol = 1e-3;

int64_t numel_of(const Shape& sizes) {
  return std::accumulate(sizes.begin(), sizes.end(), int64_t{1}, std::multiplies<>());
}

std::string shape_string(const Shape& sizes) {
  std::ostringstream out;
  out << "[";
  for (size_t i = 0; i < sizes.size(); ++i) out << (i ? ", " : "") << sizes[i];
  out << "]";
  return out.str();
}

const char* layout_name(Layout layout) {
  switch (layout) {
    case Layout::Contiguous: return "contiguous";
    case Layout::Transposed: return "transposed";
    case Layout::Strided: return "strided";
  }
  return "?";
}

Tensor laid_out(const std::vector<double>& values, const Shape& sizes, Layout layout) {
  const Tensor contiguous = tensor_of(values, sizes);
  switch (layout) {
    case Layout::Contiguous: return contiguous;
    case Layout::Transposed: {
      REQUIRE_MESSAGE(sizes.size() >= 2, "a transposed input needs two dims");
      return contiguous.transpose(-1, -2).contiguous().transpose(-1, -2);
    }
    case Layout::Strided: {
      Shape wide = sizes;
      if (wide.empty()) return contiguous;
      wide.back() *= 2;
      Tensor base = bp::zeros(wide, bp::kFloat64);
      Tensor view = base.slice(-1, 0, wide.back(), 2);
      view.copy_(contiguous);
      return view;
    }
  }
  return contiguous;
}

std::vector<double> read(const Tensor& t) { return t.contiguous().to_vector<double>(); }

std::vector<double> evaluate(const std::function<Tensor(const std::vector<Tensor>&)>& op,
                             const std::vector<Input>& inputs,
                             const std::vector<std::vector<double>>& values) {
  const bp::NoGradGuard no_grad;
  std::vector<Tensor> tensors;
  for (size_t k = 0; k < inputs.size(); ++k) {
    tensors.push_back(laid_out(values[k], inputs[k].sizes, inputs[k].layout));
  }
  return read(op(tensors));
}

}  // namespace

std::vector<double> sample_values(int64_t count, uint64_t seed) {
  std::vector<double> values(static_cast<size_t>(count));
  uint64_t state = seed * 6364136223846793005ULL + 1442695040888963407ULL;
  for (int64_t i = 0; i < count; ++i) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    const double unit = static_cast<double>(state >> 11) / static_cast<double>(1ULL << 53);
    const double magnitude = 0.1 + 0.9 * unit;
    values[i] = ((state >> 7) & 1) ? magnitude : -magnitude;
  }
  return values;
}

Tensor tensor_of(const std::vector<double>& values, const Shape& sizes) {
  return bp::from_vector(values, sizes);
}

void gradcheck(const std::function<Tensor(const std::vector<Tensor>&)>& op,
               const std::vector<Input>& inputs) {
  std::vector<std::vector<double>> values;
  std::vector<Tensor> leaves;
  for (size_t k = 0; k < inputs.size(); ++k) {
    const Input& input = inputs[k];
    values.push_back(input.values.empty() ? sample_values(numel_of(input.sizes), 17 + k)
                                          : input.values);
    REQUIRE(static_cast<int64_t>(values[k].size()) == numel_of(input.sizes));
    Tensor leaf = laid_out(values[k], input.sizes, input.layout);
    leaf.requires_grad_();
    leaves.push_back(leaf);
  }
  const Tensor output = op(leaves);
  REQUIRE_MESSAGE(output.requires_grad(), "the op's output has no history");
  REQUIRE(output.dtype() == bp::kFloat64);
  const Shape output_sizes(output.sizes().begin(), output.sizes().end());
  const int64_t m = output.numel();

  // analytic[k][j][i]: d output[j] / d input k [i], one backward pass per output element.
  std::vector<std::vector<std::vector<double>>> analytic(inputs.size());
  for (int64_t j = 0; j < m; ++j) {
    std::vector<double> one_hot(static_cast<size_t>(m), 0.0);
    one_hot[j] = 1.0;
    const std::vector<Tensor> grads = bp::autograd::grad(
        {output}, leaves, {tensor_of(one_hot, output_sizes)}, /*retain_graph=*/true,
        /*allow_unused=*/true);
    for (size_t k = 0; k < inputs.size(); ++k) {
      const int64_t n = numel_of(inputs[k].sizes);
      if (grads[k].defined()) {
        REQUIRE_MESSAGE(Shape(grads[k].sizes().begin(), grads[k].sizes().end()) == inputs[k].sizes,
                        "the gradient of input " << k << " has the wrong shape");
        analytic[k].push_back(read(grads[k]));
      } else {
        analytic[k].push_back(std::vector<double>(static_cast<size_t>(n), 0.0));
      }
    }
  }

  for (size_t k = 0; k < inputs.size(); ++k) {
    const int64_t n = numel_of(inputs[k].sizes);
    for (int64_t i = 0; i < n; ++i) {
      std::vector<std::vector<double>> plus = values, minus = values;
      plus[k][i] += kEps;
      minus[k][i] -= kEps;
      const std::vector<double> up = evaluate(op, inputs, plus);
      const std::vector<double> down = evaluate(op, inputs, minus);
      for (int64_t j = 0; j < m; ++j) {
        const double numeric = (up[j] - down[j]) / (2 * kEps);
        const double computed = analytic[k][j][i];
        if (std::abs(computed - numeric) > kAtol + kRtol * std::abs(numeric)) {
          FAIL_CHECK("input " << k << " (" << shape_string(inputs[k].sizes) << ", "
                              << layout_name(inputs[k].layout) << "), element " << i
                              << ", output element " << j << " of " << shape_string(output_sizes)
                              << ": autograd " << computed << ", finite differences " << numeric);
          return;
        }
      }
    }
  }
}

}  // namespace gradtest
