// Per-group normalisation: softmax, log_softmax, native_layer_norm, rms_norm and batch_norm.
#include "op_test_support.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <tuple>

namespace optest {
namespace {

Values softmax_of(const Values& group) {
  const double max = *std::max_element(group.begin(), group.end());
  double sum = 0;
  for (double v : group) sum += std::exp(v - max);
  Values result;
  for (double v : group) result.push_back(std::exp(v - max) / sum);
  return result;
}

Values log_softmax_of(const Values& group) {
  Values result = softmax_of(group);
  for (double& v : result) v = std::log(v);
  return result;
}

struct SoftmaxOp {
  std::string name;
  std::function<Values(const Values&)> reference;
  std::function<Tensor(const Tensor&, int64_t, std::optional<DType>)> call;
  std::function<void(Tensor& out, const Tensor&, int64_t)> call_out;
};

const std::vector<SoftmaxOp>& softmax_ops() {
  static const std::vector<SoftmaxOp> ops = {
      {"softmax", softmax_of,
       [](const Tensor& x, int64_t dim, std::optional<DType> dtype) {
         return bp::softmax(x, dim, dtype);
       },
       [](Tensor& out, const Tensor& x, int64_t dim) { bp::softmax_out(out, x, dim); }},
      {"log_softmax", log_softmax_of,
       [](const Tensor& x, int64_t dim, std::optional<DType> dtype) {
         return bp::log_softmax(x, dim, dtype);
       },
       [](Tensor& out, const Tensor& x, int64_t dim) { bp::log_softmax_out(out, x, dim); }},
  };
  return ops;
}

// Layer norm over the trailing dims of `sizes` from `axis` on, with optional weight and bias
// (row-major over those dims): out, mean and rstd.
std::tuple<Values, Values, Values> layer_norm_reference(const Values& x, const Shape& sizes,
                                                        size_t axis, const Values* weight,
                                                        const Values* bias, double eps) {
  std::vector<bool> normalized(sizes.size(), false);
  std::fill(normalized.begin() + static_cast<std::ptrdiff_t>(axis), normalized.end(), true);
  Values out(x.size()), means, rstds;
  for (const auto& group : group_indices(sizes, normalized)) {
    double mean = 0;
    for (int64_t i : group) mean += x[static_cast<size_t>(i)];
    mean /= static_cast<double>(group.size());
    double variance = 0;
    for (int64_t i : group) variance += std::pow(x[static_cast<size_t>(i)] - mean, 2);
    variance /= static_cast<double>(group.size());
    const double rstd = 1 / std::sqrt(variance + eps);
    for (size_t k = 0; k < group.size(); ++k) {
      const auto i = static_cast<size_t>(group[k]);
      out[i] = (x[i] - mean) * rstd * (weight ? (*weight)[k] : 1) + (bias ? (*bias)[k] : 0);
    }
    means.push_back(mean);
    rstds.push_back(rstd);
  }
  return {out, means, rstds};
}

}  // namespace

TEST_CASE("softmax and log_softmax along every dim, for floating dtypes and every layout") {
  const Shape shape = {3, 4, 5};
  for (const Device device : test_devices()) {
    INFO("device " << device.str());
    for (const SoftmaxOp& op : softmax_ops()) {
      for (const DType dtype :
           declared_dtypes<kernel_dtypes::softmax_int_out, kernel_dtypes::log_softmax_int_out>()) {
        for (const Layout layout : kAllLayouts) {
          for (const int64_t dim : {0, 1, 2, -1}) {
            INFO(op.name << " " << name_of(dtype) << " " << name_of(layout) << " dim " << dim);
            const Tensor x = sample_tensor(shape, dtype, layout, 60, device);
            check_tensor(
                op.call(x, dim, std::nullopt), shape, dtype,
                transform_groups(values_of(x), shape, reduced_mask(3, {dim}), op.reference));
          }
        }
      }
    }
  }
}

TEST_CASE("softmax: dtype=, out=, large inputs, empty and 0-dim tensors") {
  const double inf = std::numeric_limits<double>::infinity();
  for (const Device device : test_devices()) {
    INFO("device " << device.str());
    for (const SoftmaxOp& op : softmax_ops()) {
      INFO(op.name);
      const Tensor ints = sample_tensor({2, 6}, bp::kInt64, Layout::Transposed, 61, device);
      check_tensor(op.call(ints, 1, bp::kFloat64), {2, 6}, bp::kFloat64,
                   transform_groups(values_of(ints), {2, 6}, {false, true}, op.reference));
      const Tensor halves = sample_tensor({2, 6}, bp::kFloat16, Layout::Contiguous, 62, device);
      check_tensor(op.call(halves, 0, bp::kFloat32), {2, 6}, bp::kFloat32,
                   transform_groups(values_of(halves), {2, 6}, {true, false}, op.reference));

      const Tensor x = sample_tensor({4, 3}, bp::kFloat32, Layout::Sliced, 63, device);
      Tensor out = empty_tensor({4, 3}, bp::kFloat32, Layout::Transposed, device);
      op.call_out(out, x, 1);
      check_tensor(out, {4, 3}, bp::kFloat32,
                   transform_groups(values_of(x), {4, 3}, {false, true}, op.reference));

      INFO("values whose exp overflows are fine after subtracting the maximum");
      const Tensor large = make_tensor({1000, 1001, 1002, -inf}, {4}, bp::kFloat32, device);
      check_tensor(op.call(large, 0, std::nullopt), {4}, bp::kFloat32,
                   op.reference({1000, 1001, 1002, -inf}));

      check_tensor(op.call(bp::zeros({0, 3}, bp::kFloat32, device), 0, std::nullopt), {0, 3},
                   bp::kFloat32, {});
      check_tensor(op.call(bp::zeros({2, 0}, bp::kFloat32, device), 0, std::nullopt), {2, 0},
                   bp::kFloat32, {});
      check_tensor(op.call(make_tensor({3}, {}, bp::kFloat64, device), 0, std::nullopt), {},
                   bp::kFloat64, op.reference({3}));
    }
  }
}

TEST_CASE("softmax and log_softmax on rows of whole 16-byte vectors, odd row counts") {
  for (const Device device : test_devices()) {
    for (const DType dtype :
         declared_dtypes<kernel_dtypes::softmax_int_out, kernel_dtypes::log_softmax_int_out>()) {
      // Rows of 16 and 48 members are whole 16-byte vectors in every floating dtype.
      for (const Shape& shape : {Shape{7, 16}, Shape{5, 48}}) {
        INFO("device " << device.str() << " " << name_of(dtype) << " " << shape_string(shape));
        const Tensor x = sample_tensor(shape, dtype, Layout::Contiguous, 90, device);
        for (const SoftmaxOp& op : softmax_ops()) {
          check_tensor(op.call(x, 1, std::nullopt), shape, dtype,
                       transform_groups(values_of(x), shape, {false, true}, op.reference));
        }
      }
    }
  }
}

// e^0 is 1 exactly, so a row's maximum adds exactly 1 to the sum: log_softmax is then 0 at the
// maximum of a row where the rest vanish, and ln(1/2) rounded where two members tie.
TEST_CASE(
    "log_softmax is exactly 0 at a row's only non-vanishing member, and ln(1/2) for two equals") {
  const double inf = std::numeric_limits<double>::infinity();
  for (const Device device : test_devices("log_softmax.int_out")) {
    for (const DType dtype : {bp::kFloat32, bp::kFloat16, bp::kBFloat16}) {
      INFO("device " << device.str() << " " << name_of(dtype));
      const Tensor x = make_tensor({5, -inf, -inf, 0, 0, 0, 2, -200}, {4, 2}, dtype, device);
      const Values result = values_of(bp::log_softmax(x, 1));
      const double half =
          values_of(make_tensor({-std::log(2.0)}, {1}, dtype, bp::Device::cpu()))[0];
      CHECK(result ==
            Values{0.0, -inf, -inf, 0.0, half, half, 0.0, result[7]});  // e^-202 vanishes beside 1
      CHECK(result[7] == doctest::Approx(-202.0));
    }
  }
}

TEST_CASE(
    "native_layer_norm with and without weight and bias, for floating dtypes and every layout") {
  const Shape shape = {2, 3, 4};
  const double eps = 1e-5;
  for (const Device device : test_devices()) {
    INFO("device " << device.str());
    for (const DType dtype : declared_dtypes<kernel_dtypes::native_layer_norm_out>()) {
      for (const Layout layout : kAllLayouts) {
        for (const size_t axis : {size_t{1}, size_t{2}}) {
          const Shape normalized_shape(shape.begin() + static_cast<std::ptrdiff_t>(axis),
                                       shape.end());
          Shape stats_shape = shape;
          std::fill(stats_shape.begin() + static_cast<std::ptrdiff_t>(axis), stats_shape.end(), 1);
          const Tensor x = sample_tensor(shape, dtype, layout, 64, device);
          const Tensor weight =
              sample_tensor(normalized_shape, dtype, Layout::Transposed, 65, device);
          const Tensor bias = sample_tensor(normalized_shape, dtype, Layout::Sliced, 66, device);
          const Values w = values_of(weight), b = values_of(bias);
          for (const bool affine : {false, true}) {
            INFO(name_of(dtype) << " " << name_of(layout) << " normalized_shape "
                                << shape_string(normalized_shape) << (affine ? " with" : " without")
                                << " weight and bias");
            const auto [out, mean, rstd] = bp::native_layer_norm(
                x, normalized_shape, affine ? std::optional<Tensor>(weight) : std::nullopt,
                affine ? std::optional<Tensor>(bias) : std::nullopt, eps);
            const auto [expected_out, expected_mean, expected_rstd] = layer_norm_reference(
                values_of(x), shape, axis, affine ? &w : nullptr, affine ? &b : nullptr, eps);
            check_tensor(out, shape, dtype, expected_out);
            check_tensor(mean, stats_shape, dtype, expected_mean);
            check_tensor(rstd, stats_shape, dtype, expected_rstd);
          }
        }
      }
    }
  }
}

TEST_CASE("native_layer_norm: weight only, out= tensors, constant groups, empty batch") {
  for (const Device device : test_devices()) {
    INFO("device " << device.str());
    const Tensor x = sample_tensor({3, 4}, bp::kFloat64, Layout::Transposed, 67, device);
    const Tensor weight = sample_tensor({4}, bp::kFloat64, Layout::Contiguous, 68, device);
    const Values w = values_of(weight);
    const auto [expected_out, expected_mean, expected_rstd] =
        layer_norm_reference(values_of(x), {3, 4}, 1, &w, nullptr, 0.1);
    Tensor out = empty_tensor({3, 4}, bp::kFloat64, Layout::Sliced, device);
    Tensor mean = empty_tensor({3, 1}, bp::kFloat64, Layout::Contiguous, device);
    Tensor rstd = empty_tensor({3, 1}, bp::kFloat64, Layout::Contiguous, device);
    bp::native_layer_norm_out(out, mean, rstd, x, {4}, weight, std::nullopt, 0.1);
    check_tensor(out, {3, 4}, bp::kFloat64, expected_out);
    check_tensor(mean, {3, 1}, bp::kFloat64, expected_mean);
    check_tensor(rstd, {3, 1}, bp::kFloat64, expected_rstd);

    INFO("a constant group normalises to 0, with rstd = 1 / sqrt(eps)");
    const auto [flat_out, flat_mean, flat_rstd] = bp::native_layer_norm(
        bp::full({2, 3}, 5, bp::kFloat32, device), {3}, std::nullopt, std::nullopt, 0.25);
    check_tensor(flat_out, {2, 3}, bp::kFloat32, {0, 0, 0, 0, 0, 0});
    check_tensor(flat_mean, {2, 1}, bp::kFloat32, {5, 5});
    check_tensor(flat_rstd, {2, 1}, bp::kFloat32, {2, 2});
    // Also where the value is large against eps and the rounding error of a mean times
    // 1 / sqrt(eps) would show, for groups in a row and side by side.
    for (const auto& [dtype, value] :
         {std::pair{bp::kFloat32, 7e7}, std::pair{bp::kFloat64, 1e6 + 0.3},
          std::pair{bp::kBFloat16, 3e38}, std::pair{bp::kFloat64, 1e300}}) {
      // Rows of 4096 are whole 16-byte vectors in every dtype (the CUDA backend's register
      // rows); rows of 4097 are not.
      for (const int64_t width : {4096, 4097}) {
        INFO(dtype_name(dtype) << " groups of " << width << " times " << value);
        const Tensor rows = bp::full({2, width}, value, dtype, device);
        const Tensor side_by_side = bp::full({width, 2}, value, dtype, device).transpose(0, 1);
        for (const Tensor& groups : {rows, side_by_side}) {
          const Tensor y = bp::layer_norm(groups, {width}).to(bp::kFloat64).cpu();
          const std::vector<double> values = y.to_vector<double>();
          CHECK(std::all_of(values.begin(), values.end(), [](double v) { return v == 0; }));
        }
      }
    }

    const auto [empty_out, empty_mean, empty_rstd] = bp::native_layer_norm(
        bp::zeros({0, 3}, bp::kFloat32, device), {3}, std::nullopt, std::nullopt, 1e-5);
    check_tensor(empty_out, {0, 3}, bp::kFloat32, {});
    check_tensor(empty_mean, {0, 1}, bp::kFloat32, {});
  }
}

TEST_CASE("layer_norm: PyTorch's call, with eps 1e-5 unless given, is native_layer_norm's output") {
  for (const Device device : test_devices()) {
    INFO("device " << device.str());
    const Tensor x = sample_tensor({2, 3, 4}, bp::kFloat32, Layout::Transposed, 69, device);
    const Tensor weight = sample_tensor({3, 4}, bp::kFloat32, Layout::Contiguous, 70, device);
    const Tensor bias = sample_tensor({3, 4}, bp::kFloat32, Layout::Contiguous, 71, device);
    const Values w = values_of(weight), b = values_of(bias);
    check_tensor(bp::layer_norm(x, {3, 4}, weight, bias), {2, 3, 4}, bp::kFloat32,
                 std::get<0>(layer_norm_reference(values_of(x), {2, 12}, 1, &w, &b, 1e-5)));
    check_tensor(
        bp::layer_norm(x, {4}), {2, 3, 4}, bp::kFloat32,
        std::get<0>(layer_norm_reference(values_of(x), {6, 4}, 1, nullptr, nullptr, 1e-5)));
    INFO("eps is the variance's floor: a large one shrinks every output");
    check_tensor(
        bp::layer_norm(x, {4}, std::nullopt, std::nullopt, 100.0), {2, 3, 4}, bp::kFloat32,
        std::get<0>(layer_norm_reference(values_of(x), {6, 4}, 1, nullptr, nullptr, 100.0)));
  }
}

namespace {

// x / sqrt(mean(x^2 over each group of the trailing dims from `axis`) + eps) * weight.
Values rms_norm_reference(const Values& x, const Shape& shape, size_t axis, const Values* weight,
                          double eps) {
  int64_t group = 1;
  for (size_t d = axis; d < shape.size(); ++d) group *= shape[d];
  Values out(x.size());
  for (size_t start = 0; start < x.size(); start += static_cast<size_t>(group)) {
    double squares = 0;
    for (int64_t i = 0; i < group; ++i) squares += x[start + i] * x[start + i];
    const double scale = 1 / std::sqrt(squares / static_cast<double>(group) + eps);
    for (int64_t i = 0; i < group; ++i) {
      out[start + i] = x[start + i] * scale * (weight ? (*weight)[static_cast<size_t>(i)] : 1.0);
    }
  }
  return out;
}

}  // namespace

TEST_CASE("rms_norm with and without weight, given eps or the dtype's epsilon") {
  const Shape shape = {2, 3, 4};
  for (const Device device : test_devices("rms_norm.out")) {
    INFO("device " << device.str());
    for (const DType dtype : declared_dtypes<kernel_dtypes::rms_norm_out>()) {
      // eps=None is the epsilon of the dtype the kernel computes in: float32 for the half types.
      const double default_eps = dtype == bp::kFloat64 ? std::numeric_limits<double>::epsilon()
                                                       : std::numeric_limits<float>::epsilon();
      for (const Layout layout : kAllLayouts) {
        for (const size_t axis : {size_t{1}, size_t{2}}) {
          const Shape normalized_shape(shape.begin() + static_cast<std::ptrdiff_t>(axis),
                                       shape.end());
          const Tensor x = sample_tensor(shape, dtype, layout, 81, device);
          const Tensor weight =
              sample_tensor(normalized_shape, dtype, Layout::Transposed, 82, device);
          const Values w = values_of(weight);
          INFO(name_of(dtype) << " " << name_of(layout) << " normalized_shape "
                              << shape_string(normalized_shape));
          check_tensor(bp::rms_norm(x, normalized_shape), shape, dtype,
                       rms_norm_reference(values_of(x), shape, axis, nullptr, default_eps));
          check_tensor(bp::rms_norm(x, normalized_shape, weight, 0.5), shape, dtype,
                       rms_norm_reference(values_of(x), shape, axis, &w, 0.5));
        }
      }
    }
    INFO("out=, a zero group, an empty batch");
    const Tensor x = make_tensor({0, 0, 3, 4}, {2, 2}, bp::kFloat32, device);
    Tensor out = empty_tensor({2, 2}, bp::kFloat32, Layout::Transposed, device);
    bp::rms_norm_out(out, x, {2}, std::nullopt, 1.0);
    check_tensor(out, {2, 2}, bp::kFloat32,
                 rms_norm_reference({0, 0, 3, 4}, {2, 2}, 1, nullptr, 1.0));
    check_tensor(bp::rms_norm(bp::zeros({0, 3}, bp::kFloat32, device), {3}), {0, 3}, bp::kFloat32,
                 {});
  }
  check_error(
      [] {
        bp::rms_norm(bp::zeros({2, 3}), {2});
      },
      "rms_norm: given normalized_shape [2], expected an input of shape [*, 2]");
  check_error(
      [] {
        bp::rms_norm(bp::zeros({2, 3}), {3}, bp::zeros({2}));
      },
      "expected weight of shape [3], but got weight of shape [2]");
  check_error(
      [] {
        bp::rms_norm(bp::zeros({2, 3}), {3}, std::nullopt, -1.0);
      },
      "eps must be a non-negative number, got -1");
}

TEST_CASE("batch_norm in inference mode normalises each channel with the running statistics") {
  const Shape shape = {2, 3, 2, 2};
  const double eps = 1e-5;
  for (const Device device : test_devices("batch_norm_inference.out")) {
    INFO("device " << device.str());
    for (const DType dtype : declared_dtypes<kernel_dtypes::batch_norm_inference_out>()) {
      for (const Layout layout : kAllLayouts) {
        for (const bool affine : {false, true}) {
          INFO(name_of(dtype) << " " << name_of(layout) << (affine ? " with" : " without")
                              << " weight and bias");
          const Tensor x = sample_tensor(shape, dtype, layout, 91, device);
          const Tensor mean = sample_tensor({3}, dtype, Layout::Sliced, 92, device);
          const Tensor var =
              bp::add(bp::abs(sample_tensor({3}, dtype, Layout::Contiguous, 93, device)), 0.5);
          const Tensor weight = sample_tensor({3}, dtype, Layout::Sliced, 94, device);
          const Tensor bias = sample_tensor({3}, dtype, Layout::Contiguous, 95, device);
          const Values xs = values_of(x), m = values_of(mean), v = values_of(var),
                       w = values_of(weight), b = values_of(bias);
          Values expected(xs.size());
          for (size_t i = 0; i < xs.size(); ++i) {
            const size_t c = (i / 4) % 3;
            const double normalised = (xs[i] - m[c]) / std::sqrt(v[c] + eps);
            expected[i] = affine ? normalised * w[c] + b[c] : normalised;
          }
          const std::optional<Tensor> maybe_weight =
              affine ? std::optional<Tensor>(weight) : std::nullopt;
          const std::optional<Tensor> maybe_bias =
              affine ? std::optional<Tensor>(bias) : std::nullopt;
          check_tensor(
              bp::batch_norm(x, maybe_weight, maybe_bias, mean, var, false, 0.1, eps, true), shape,
              dtype, expected);
          Tensor out = empty_tensor(shape, dtype, Layout::Sliced, device);
          bp::batch_norm_inference_out(out, x, maybe_weight, maybe_bias, mean, var, eps);
          check_tensor(out, shape, dtype, expected);
        }
      }
    }
    INFO("a 2-D (N, C) input");
    const Tensor x = make_tensor({1, 2, 3, 4}, {2, 2}, bp::kFloat32, device);
    check_tensor(bp::batch_norm(
                     x, std::nullopt, std::nullopt, make_tensor({1, 2}, {2}, bp::kFloat32, device),
                     make_tensor({4, 1}, {2}, bp::kFloat32, device), false, 0.1, 0.0, false),
                 {2, 2}, bp::kFloat32, {0, 0, 1, 2});
  }
  const Tensor x = bp::zeros({2, 3, 4});
  const Tensor stats = bp::ones({3});
  check_error(
      [&] {
        bp::batch_norm(x, std::nullopt, std::nullopt, std::nullopt, stats, false, 0.1, 1e-5, true);
      },
      "inference mode needs running_mean and running_var");
  check_error(
      [&] { bp::batch_norm(x, bp::ones({4}), std::nullopt, stats, stats, false, 0.1, 1e-5, true); },
      "expected weight of shape [3], but got weight of shape [4]");
  check_error(
      [&] {
        bp::batch_norm(bp::zeros({3}), std::nullopt, std::nullopt, stats, stats, false, 0.1, 1e-5,
                       true);
      },
      "expected an input of at least 2 dims (N, C, ...), got shape [3]");
}

}  // namespace optest
