// The gradients of softmax, log_softmax and layer norm, against their formulas in double on the
// forward op's own outputs.
#include "op_test_support.h"

#include <algorithm>
#include <cmath>
#include <tuple>

namespace optest {
namespace {

// A tensor with t's values, laid out with dims 0 and 1 swapped in memory.
Tensor relaid(const Tensor& t) { return t.transpose(0, 1).contiguous().transpose(0, 1); }

// dx of softmax (or log_softmax) along `dim` from g and its output y.
Values softmax_gradient(const Values& g, const Values& y, const Shape& shape, int64_t dim,
                        bool log) {
  Values dx(g.size());
  for (const auto& group : group_indices(shape, reduced_mask(3, {dim}))) {
    double sum = 0;
    for (const int64_t i : group) sum += log ? g[i] : g[i] * y[i];
    for (const int64_t i : group) dx[i] = log ? g[i] - std::exp(y[i]) * sum : y[i] * (g[i] - sum);
  }
  return dx;
}

}  // namespace

TEST_CASE("softmax's and log_softmax's gradients along every dim, for every dtype and layout") {
  const Shape shape = {3, 4, 5};
  for (const Device device : test_devices("_softmax_backward_data.out")) {
    for (const bool log : {false, true}) {
      for (const DType dtype :
           declared_dtypes<kernel_dtypes::_softmax_backward_data_out,
                           kernel_dtypes::_log_softmax_backward_data_out>()) {
        for (const Layout layout : kAllLayouts) {
          for (const int64_t dim : {0, 1, 2, -1}) {
            INFO(device.str() << (log ? " log_softmax " : " softmax ") << name_of(dtype) << " "
                              << name_of(layout) << " dim " << dim);
            const Tensor x = sample_tensor(shape, dtype, Layout::Contiguous, 80, device);
            const Tensor y = relaid(log ? bp::log_softmax(x, dim) : bp::softmax(x, dim));
            const Tensor g = sample_tensor(shape, dtype, layout, 81, device);
            const Tensor dx = log ? bp::_log_softmax_backward_data(g, y, dim, dtype)
                                  : bp::_softmax_backward_data(g, y, dim, dtype);
            check_tensor(dx, shape, dtype,
                         softmax_gradient(values_of(g), values_of(y), shape, dim, log),
                         cancellation_tolerance(dtype, 4));
          }
        }
      }
    }
  }
}

TEST_CASE("softmax's gradient in input_dtype, out=, and empty tensors") {
  for (const Device device : test_devices("_softmax_backward_data.out")) {
    const Shape shape = {2, 3, 4};
    const Tensor y = bp::softmax(sample_tensor(shape, bp::kFloat32, Layout::Sliced, 82, device), 2);
    const Tensor g = sample_tensor(shape, bp::kFloat32, Layout::Contiguous, 83, device);
    INFO("softmax of a Half input computed in Float: its gradient is Half");
    const Tensor half = bp::_softmax_backward_data(g, y, 2, bp::kFloat16);
    check_tensor(half, shape, bp::kFloat16,
                 softmax_gradient(values_of(g), values_of(y), shape, 2, false),
                 cancellation_tolerance(bp::kFloat16, 4));
    Tensor out = empty_tensor(shape, bp::kFloat32, Layout::Transposed, device);
    bp::_log_softmax_backward_data_out(out, g, bp::log(y), 1, bp::kFloat32);
    check_tensor(out, shape, bp::kFloat32,
                 softmax_gradient(values_of(g), values_of(bp::log(y)), shape, 1, true),
                 cancellation_tolerance(bp::kFloat32, 4));
    const Tensor empty = bp::zeros({0, 3}, bp::kFloat32, device);
    check_tensor(bp::_softmax_backward_data(empty, empty, 1, bp::kFloat32), {0, 3},
                 bp::kFloat32, {});
    const Tensor rows = bp::zeros({2, 0}, bp::kFloat32, device);
    check_tensor(bp::_log_softmax_backward_data(rows, rows, 1, bp::kFloat32), {2, 0},
                 bp::kFloat32, {});
  }
}

namespace {

// Layer norm's gradients over the trailing `normalized` dims: dx, dweight, dbias.
std::tuple<Values, Values, Values> layer_norm_gradients(const Values& g, const Values& x,
                                                        const Shape& shape, size_t normalized,
                                                        const Values& means,
                                                        const Values& rstds,
                                                        const Values* weight) {
  std::vector<bool> reduced(shape.size(), false);
  std::fill(reduced.end() - static_cast<std::ptrdiff_t>(normalized), reduced.end(), true);
  const auto groups = group_indices(shape, reduced);
  const size_t n = groups.empty() ? 0 : groups[0].size();
  Values dx(x.size()), dweight(n), dbias(n);
  for (size_t k = 0; k < groups.size(); ++k) {
    const auto& group = groups[k];
    Values normalized_x, h;
    double h_sum = 0, hx_sum = 0;
    for (size_t j = 0; j < n; ++j) {
      const auto i = static_cast<size_t>(group[j]);
      normalized_x.push_back((x[i] - means[k]) * rstds[k]);
      h.push_back(g[i] * (weight ? (*weight)[j] : 1));
      h_sum += h[j];
      hx_sum += h[j] * normalized_x[j];
    }
    for (size_t j = 0; j < n; ++j) {
      const auto i = static_cast<size_t>(group[j]);
      dx[i] = rstds[k] * (h[j] - h_sum / n - normalized_x[j] * hx_sum / n);
      dweight[j] += g[i] * normalized_x[j];
      dbias[j] += g[i];
    }
  }
  return {dx, dweight, dbias};
}

}  // namespace

TEST_CASE("native_layer_norm_backward over one or two dims, with and without weight") {
  const Shape shape = {4, 3, 5};
  for (const Device device : test_devices("native_layer_norm_backward.out")) {
    for (const DType dtype : declared_dtypes<kernel_dtypes::native_layer_norm_backward_out>()) {
      for (const Layout layout : kAllLayouts) {
        for (const size_t normalized : {size_t{1}, size_t{2}}) {
          for (const bool weighted : {false, true}) {
            INFO(device.str() << " " << name_of(dtype) << " " << name_of(layout) << " over "
                              << normalized << " dims, weight " << weighted);
            const Shape parameter_shape(shape.end() - static_cast<std::ptrdiff_t>(normalized),
                                        shape.end());
            const Tensor x = sample_tensor(shape, dtype, layout, 90, device);
            const Tensor g = sample_tensor(shape, dtype, Layout::Sliced, 91, device);
            const std::optional<Tensor> weight =
                weighted ? std::optional(sample_tensor(parameter_shape, dtype, Layout::Contiguous,
                                                       92, device))
                         : std::nullopt;
            const auto [out, mean, rstd] =
                bp::native_layer_norm(x, parameter_shape, weight, std::nullopt, 1e-5);
            const Values weight_values = weighted ? values_of(*weight) : Values{};
            const auto [dx, dweight, dbias] = bp::native_layer_norm_backward(
                g, x, parameter_shape, mean, rstd, weight, std::nullopt);
            const auto [expected_dx, expected_dweight, expected_dbias] = layer_norm_gradients(
                values_of(g), values_of(x), shape, normalized, values_of(mean), values_of(rstd),
                weighted ? &weight_values : nullptr);
            // rstd is up to 1 / sqrt(eps) for a constant group; the sample values keep it near 1.
            check_tensor(dx, shape, dtype, expected_dx, cancellation_tolerance(dtype, 64));
            check_tensor(dweight, parameter_shape, dtype, expected_dweight,
                         cancellation_tolerance(dtype, 64));
            check_tensor(dbias, parameter_shape, dtype, expected_dbias,
                         cancellation_tolerance(dtype, 64));
          }
        }
      }
    }
  }
}

TEST_CASE("native_layer_norm_backward of an empty batch has zero parameter gradients") {
  for (const Device device : test_devices("native_layer_norm_backward.out")) {
    const Tensor x = bp::zeros({0, 3}, bp::kFloat32, device);
    const Tensor stats = bp::zeros({0, 1}, bp::kFloat32, device);
    const auto [dx, dweight, dbias] =
        bp::native_layer_norm_backward(x, x, {3}, stats, stats, std::nullopt, std::nullopt);
    check_tensor(dx, {0, 3}, bp::kFloat32, {});
    check_tensor(dweight, {3}, bp::kFloat32, {0, 0, 0});
    check_tensor(dbias, {3}, bp::kFloat32, {0, 0, 0});
  }
}

TEST_CASE("native_layer_norm_backward on many groups sums the parameter gradients in blocks") {
  const Shape shape = {300, 257};
  for (const Device device : test_devices("native_layer_norm_backward.out")) {
    const Tensor x = sample_tensor(shape, bp::kFloat32, Layout::Contiguous, 93, device);
    const Tensor g = sample_tensor(shape, bp::kFloat32, Layout::Contiguous, 94, device);
    const auto [out, mean, rstd] = bp::native_layer_norm(x, {257}, std::nullopt, std::nullopt, 0);
    const auto [dx, dweight, dbias] =
        bp::native_layer_norm_backward(g, x, {257}, mean, rstd, std::nullopt, std::nullopt);
    const auto [expected_dx, expected_dweight, expected_dbias] = layer_norm_gradients(
        values_of(g), values_of(x), shape, 1, values_of(mean), values_of(rstd), nullptr);
    check_tensor(dx, shape, bp::kFloat32, expected_dx, 1e-4);
    check_tensor(dweight, {257}, bp::kFloat32, expected_dweight, 1e-3);
    check_tensor(dbias, {257}, bp::kFloat32, expected_dbias, 1e-3);
  }
}

}  // namespace optest
