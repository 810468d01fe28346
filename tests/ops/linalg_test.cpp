// Matrix products: mm, bmm, addmm, _addmm_activation, and linear over them.
#include "op_test_support.h"

#include <cmath>
#include <limits>
#include <numbers>

namespace optest {
namespace {

// (n x k) @ (k x m), row-major values, for `batches` consecutive pairs.
Values matmul_reference(const Values& a, const Values& b, int64_t batches, int64_t n, int64_t k,
                        int64_t m) {
  Values out(static_cast<size_t>(batches * n * m), 0.0);
  for (int64_t batch = 0; batch < batches; ++batch) {
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < m; ++j) {
        double sum = 0;
        for (int64_t p = 0; p < k; ++p) {
          sum += a[static_cast<size_t>((batch * n + i) * k + p)] *
                 b[static_cast<size_t>((batch * k + p) * m + j)];
        }
        out[static_cast<size_t>((batch * n + i) * m + j)] = sum;
      }
    }
  }
  return out;
}

// beta * self + alpha * product, with self broadcast to the product's shape; beta == 0 ignores
// self entirely (NaN included).
Values addmm_reference(const Values& self, const Shape& self_shape, const Values& product,
                       const Shape& shape, double beta, double alpha) {
  const Values addend = broadcast_values(self, self_shape, shape);
  Values out(product.size());
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = alpha * product[i] + (beta == 0 ? 0 : beta * addend[i]);
  return out;
}

// ReLU, or GELU in its tanh approximation, of every value.
Values activated(Values values, bool use_gelu) {
  for (double& x : values) {
    if (use_gelu) {
      const double inner =
          std::numbers::sqrt2 * std::numbers::inv_sqrtpi * (x + 0.044715 * x * x * x);
      x = 0.5 * x * (1 + std::tanh(inner));
    } else {
      x = x < 0 ? 0 : x;
    }
  }
  return values;
}

// How far a backend may move each result by rounding alpha * product to a 16-bit `dtype` before
// it adds the bias: cuBLASLt's bias epilogue does (so does PyTorch's CUDA addmm, which uses it).
// Half a unit in the product's last place, which ReLU passes on as it is and GELU with a slope of
// at most 1.13: a whole unit bounds both. Nothing for the wider dtypes, whose tolerance covers it.
Values rounding_before_the_bias(const Values& product, double alpha, DType dtype) {
  Values bound(product.size(), 0.0);
  if (dtype != bp::kFloat16 && dtype != bp::kBFloat16) return bound;
  for (size_t i = 0; i < product.size(); ++i)
    bound[i] = unit_in_last_place(dtype, alpha * product[i]);
  return bound;
}

struct MatmulShape {
  int64_t n, k, m;
};
constexpr MatmulShape kShapes[] = {{3, 4, 5}, {1, 7, 1}, {4, 1, 3}, {2, 0, 3}, {0, 3, 2}};

}  // namespace

TEST_CASE("mm and bmm for every dtype they take and every layout, including empty dims") {
  for (const Device device : test_devices()) {
    INFO("device " << device.str());
    for (const DType dtype : declared_dtypes<kernel_dtypes::mm_out, kernel_dtypes::bmm_out>()) {
      for (const Layout layout : kAllLayouts) {
        for (const MatmulShape& s : kShapes) {
          INFO(name_of(dtype) << " " << name_of(layout) << " (" << s.n << " x " << s.k << ") @ ("
                              << s.k << " x " << s.m << ")");
          const Tensor a = sample_tensor({s.n, s.k}, dtype, layout, 70, device);
          const Tensor b = sample_tensor({s.k, s.m}, dtype, Layout::Transposed, 71, device);
          check_tensor(bp::mm(a, b), {s.n, s.m}, dtype,
                       matmul_reference(values_of(a), values_of(b), 1, s.n, s.k, s.m));

          const Tensor batch_a = sample_tensor({2, s.n, s.k}, dtype, Layout::Sliced, 72, device);
          const Tensor batch_b = sample_tensor({2, s.k, s.m}, dtype, layout, 73, device);
          check_tensor(bp::bmm(batch_a, batch_b), {2, s.n, s.m}, dtype,
                       matmul_reference(values_of(batch_a), values_of(batch_b), 2, s.n, s.k, s.m));
        }
      }
    }
  }
}

TEST_CASE("mm and bmm write out= tensors of any writable layout") {
  for (const Device device : test_devices()) {
    for (const Layout layout : kWritableLayouts) {
      INFO("device " << device.str() << " " << name_of(layout));
      const Tensor a = sample_tensor({3, 2}, bp::kFloat32, Layout::Transposed, 74, device);
      const Tensor b = sample_tensor({2, 4}, bp::kFloat32, Layout::Contiguous, 75, device);
      Tensor out = empty_tensor({3, 4}, bp::kFloat32, layout, device);
      bp::mm_out(out, a, b);
      check_tensor(out, {3, 4}, bp::kFloat32,
                   matmul_reference(values_of(a), values_of(b), 1, 3, 2, 4));

      const Tensor batch_a = sample_tensor({3, 2, 2}, bp::kInt64, Layout::Expanded, 76, device);
      const Tensor batch_b = sample_tensor({3, 2, 3}, bp::kInt64, Layout::Sliced, 77, device);
      Tensor batch_out = empty_tensor({3, 2, 3}, bp::kInt64, layout, device);
      bp::bmm_out(batch_out, batch_a, batch_b);
      check_tensor(batch_out, {3, 2, 3}, bp::kInt64,
                   matmul_reference(values_of(batch_a), values_of(batch_b), 3, 2, 2, 3));
    }
  }
}

TEST_CASE("addmm: beta * self + alpha * (mat1 @ mat2), self broadcast, in place and out=") {
  struct Coefficients {
    double beta, alpha;
  };
  const Coefficients coefficients[] = {{1, 1}, {2, 3}, {0, 2}, {1, 0}};
  const Shape self_shapes[] = {{3, 4}, {4}, {1, 4}, {3, 1}, {}};
  for (const Device device : test_devices()) {
    INFO("device " << device.str());
    for (const DType dtype : declared_dtypes<kernel_dtypes::addmm_out>()) {
      for (const auto& [beta, alpha] : coefficients) {
        for (const Shape& self_shape : self_shapes) {
          INFO(name_of(dtype) << " beta " << beta << " alpha " << alpha << " self "
                              << shape_string(self_shape));
          const Tensor self = sample_tensor(self_shape, dtype, Layout::Transposed, 78, device);
          const Tensor mat1 = sample_tensor({3, 2}, dtype, Layout::Sliced, 79, device);
          const Tensor mat2 = sample_tensor({2, 4}, dtype, Layout::Transposed, 80, device);
          // Integer dtypes take integer coefficients, as PyTorch requires.
          const bp::Scalar beta_scalar = bp::is_floating_point(dtype)
                                             ? bp::Scalar(beta)
                                             : bp::Scalar(static_cast<int64_t>(beta));
          const bp::Scalar alpha_scalar = bp::is_floating_point(dtype)
                                              ? bp::Scalar(alpha)
                                              : bp::Scalar(static_cast<int64_t>(alpha));
          const Values expected = addmm_reference(
              values_of(self), self_shape,
              matmul_reference(values_of(mat1), values_of(mat2), 1, 3, 2, 4), {3, 4}, beta, alpha);
          check_tensor(bp::addmm(self, mat1, mat2, beta_scalar, alpha_scalar), {3, 4}, dtype,
                       expected);

          Tensor out = empty_tensor({3, 4}, dtype, Layout::Sliced, device);
          bp::addmm_out(out, self, mat1, mat2, beta_scalar, alpha_scalar);
          check_tensor(out, {3, 4}, dtype, expected);

          if (self_shape != Shape{3, 4}) continue;  // in place needs self of the result's shape
          Tensor in_place = self.clone();
          in_place.addmm_(mat1, mat2, beta_scalar, alpha_scalar);
          check_tensor(in_place, {3, 4}, dtype, expected);
        }
      }
    }
  }
}

TEST_CASE(
    "addmm with beta = 0 ignores NaN in self, and with an empty inner dim gives beta * self, in "
    "place too") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (const Device device : test_devices()) {
    INFO("device " << device.str());
    const Tensor nans = bp::full({2, 2}, nan, bp::kFloat32, device);
    const Tensor mat1 = make_tensor({1, 2, 3, 4}, {2, 2}, bp::kFloat32, device);
    const Tensor identity = make_tensor({1, 0, 0, 1}, {2, 2}, bp::kFloat32, device);
    check_tensor(bp::addmm(nans, mat1, identity, 0, 1), {2, 2}, bp::kFloat32, {1, 2, 3, 4});

    const Tensor self = make_tensor({1, 2, 3, 4, 5, 6}, {2, 3}, bp::kFloat64, device);
    check_tensor(bp::addmm(self, bp::zeros({2, 0}, bp::kFloat64, device),
                           bp::zeros({0, 3}, bp::kFloat64, device), 2, 1),
                 {2, 3}, bp::kFloat64, {2, 4, 6, 8, 10, 12});

    INFO("in place, self is read before it is overwritten");
    Tensor in_place = make_tensor({1, 2, 3, 4, 5, 6}, {2, 3}, bp::kFloat64, device);
    in_place.addmm_(bp::zeros({2, 0}, bp::kFloat64, device),
                    bp::zeros({0, 3}, bp::kFloat64, device), 2, 1);
    check_tensor(in_place, {2, 3}, bp::kFloat64, {2, 4, 6, 8, 10, 12});
  }
}

TEST_CASE("_addmm_activation: addmm, then ReLU or tanh-approximated GELU, fused") {
  struct Coefficients {
    double beta, alpha;
  };
  const Coefficients coefficients[] = {{1, 1}, {2, 3}, {0, 2}};
  // A bias row (fused as the product's bias), a full matrix, and one value.
  const Shape self_shapes[] = {{40}, {33, 40}, {}};
  for (const Device device : test_devices("_addmm_activation.out")) {
    for (const DType dtype : {bp::kFloat32, bp::kFloat64, bp::kFloat16, bp::kBFloat16}) {
      for (const auto& [beta, alpha] : coefficients) {
        for (const Shape& self_shape : self_shapes) {
          for (const bool use_gelu : {false, true}) {
            INFO(device.str() << " " << name_of(dtype) << " beta " << beta << " alpha " << alpha
                              << " self " << shape_string(self_shape) << " use_gelu " << use_gelu);
            const Tensor self = sample_tensor(self_shape, dtype, Layout::Contiguous, 90, device);
            const Tensor mat1 = sample_tensor({33, 17}, dtype, Layout::Sliced, 91, device);
            const Tensor mat2 = sample_tensor({17, 40}, dtype, Layout::Transposed, 92, device);
            const Values product =
                matmul_reference(values_of(mat1), values_of(mat2), 1, 33, 17, 40);
            const Values expected = activated(
                addmm_reference(values_of(self), self_shape, product, {33, 40}, beta, alpha),
                use_gelu);
            const Values product_rounding = rounding_before_the_bias(product, alpha, dtype);
            check_tensor(bp::_addmm_activation(self, mat1, mat2, beta, alpha, use_gelu), {33, 40},
                         dtype, expected, product_rounding);

            Tensor out = empty_tensor({33, 40}, dtype, Layout::Transposed, device);
            bp::_addmm_activation_out(out, self, mat1, mat2, beta, alpha, use_gelu);
            check_tensor(out, {33, 40}, dtype, expected, product_rounding);
          }
        }
      }
    }
  }
}

TEST_CASE("_addmm_activation: an empty inner dim activates beta * self, and integers are refused") {
  for (const Device device : test_devices("_addmm_activation.out")) {
    INFO(device.str());
    const Tensor self = make_tensor({-1, 2, -3, 4, -5, 6}, {2, 3}, bp::kFloat32, device);
    check_tensor(bp::_addmm_activation(self, bp::zeros({2, 0}, bp::kFloat32, device),
                                       bp::zeros({0, 3}, bp::kFloat32, device), 2, 1),
                 {2, 3}, bp::kFloat32, {0, 4, 0, 8, 0, 12});
  }
  check_error(
      [] {
        bp::_addmm_activation(bp::zeros({2}, bp::kInt32), bp::zeros({2, 2}, bp::kInt32),
                              bp::zeros({2, 2}, bp::kInt32));
      },
      "_addmm_activation.out takes Float32, Float64, Float16 or BFloat16, but out is Int32; "
      "convert with .to(bp::kFloat32)");
  check_error(
      [] {
        bp::_addmm_activation(bp::zeros({3}), bp::zeros({2, 2}), bp::zeros({2, 4}));
      },
      "_addmm_activation: self of shape [3] cannot be broadcast to the product's shape [2, 4]");
}

TEST_CASE("matrix products of Bool tensors are refused with a clear message") {
  const Tensor mask = make_tensor({1, 0, 0, 1}, {2, 2}, bp::kBool);
  check_error([&] { bp::mm(mask, mask); }, "Bool");
}

TEST_CASE("linear: input @ weight^T + bias for inputs of any rank") {
  for (const Device device : test_devices()) {
    INFO("device " << device.str());
    for (const DType dtype : floating_dtypes()) {
      const Tensor weight = sample_tensor({3, 4}, dtype, Layout::Sliced, 501, device);
      const Tensor bias = sample_tensor({3}, dtype, Layout::Contiguous, 502, device);
      const Values w = values_of(weight), b = values_of(bias);
      Values w_t;  // (4 x 3)
      for (int64_t k = 0; k < 4; ++k) {
        for (int64_t j = 0; j < 3; ++j) w_t.push_back(w[static_cast<size_t>(j * 4 + k)]);
      }
      for (const Shape& input_shape : {Shape{5, 4}, Shape{2, 3, 4}, Shape{4}, Shape{0, 4}}) {
        for (const Layout layout : kAllLayouts) {
          INFO(name_of(dtype) << " " << name_of(layout) << " input " << shape_string(input_shape));
          const Tensor input = sample_tensor(input_shape, dtype, layout, 503, device);
          const int64_t rows = numel_of(input_shape) / 4;
          const Values product = matmul_reference(values_of(input), w_t, 1, rows, 4, 3);
          Shape out_shape = input_shape;
          out_shape.back() = 3;
          check_tensor(bp::linear(input, weight), out_shape, dtype, product);
          Values with_bias = product;
          for (size_t i = 0; i < with_bias.size(); ++i) with_bias[i] += b[i % 3];
          check_tensor(bp::linear(input, weight, bias), out_shape, dtype, with_bias);
        }
      }
    }
  }
  check_error(
      [] {
        bp::linear(bp::zeros({2, 5}), bp::zeros({3, 4}));
      },
      "linear: input of shape [2, 5] does not end in in_features=4");
  check_error(
      [] {
        bp::linear(bp::zeros({2, 4}), bp::zeros({2, 2, 4}));
      },
      "expected a 2-D weight (out_features, in_features), or a 1-D one (in_features), "
      "got shape [2, 2, 4]");
}

TEST_CASE("linear with a 1-D weight is one output feature, whose dim the result drops") {
  for (const Device device : test_devices()) {
    INFO("device " << device.str());
    const Tensor weight = bp::from_vector<float>({1, 2, 3}, {3}).to(device);
    const Tensor input = bp::from_vector<float>({1, 0, 0, 0, 1, 1}, {2, 3}).to(device);
    check_tensor(bp::linear(input, weight), {2}, bp::kFloat32, {1, 5});
    check_tensor(bp::linear(input, weight, bp::full({}, 10.0, bp::kFloat32, device)), {2},
                 bp::kFloat32, {11, 15});
    check_tensor(bp::linear(input.select(0, 1), weight), {}, bp::kFloat32, {5});
  }
}

}  // namespace optest
