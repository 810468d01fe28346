// Reductions: sum, mean, amax, max.dim, argmax.
#include "op_test_support.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>

namespace optest {
namespace {

double sum_of(const Values& group) { return std::accumulate(group.begin(), group.end(), 0.0); }

double mean_of(const Values& group) { return sum_of(group) / static_cast<double>(group.size()); }

// The first maximum's position; NaN counts as the largest value.
size_t argmax_of(const Values& group) {
  size_t best = 0;
  for (size_t i = 1; i < group.size(); ++i) {
    if (std::isnan(group[best])) break;
    if (std::isnan(group[i]) || group[i] > group[best]) best = i;
  }
  return best;
}

double max_of(const Values& group) { return group[argmax_of(group)]; }

// Integer and Bool inputs sum to Int64.
DType sum_dtype(DType dtype) { return bp::is_floating_point(dtype) ? dtype : bp::kInt64; }

// A reduction over some dims of a [2, 3, 4] tensor.
struct DimsCase {
  Shape dims;
  bool keepdim;
};
const DimsCase kDimsCases[] = {
    {{}, false},     {{0}, false},   {{-1}, true},       {{1}, false},
    {{0, 2}, false}, {{2, 0}, true}, {{0, 1, 2}, false},
};

}  // namespace

TEST_CASE("sum and mean over any dims, for every dtype and layout") {
  const Shape shape = {2, 3, 4};
  for (const Device device : test_devices()) {
    INFO("device " << device.str());
    for (const DType dtype : all_dtypes()) {
      for (const Layout layout : kAllLayouts) {
        for (const DimsCase& c : kDimsCases) {
          INFO(name_of(dtype) << " " << name_of(layout) << " dims " << shape_string(c.dims)
                              << (c.keepdim ? " keepdim" : ""));
          const Tensor x = sample_tensor(shape, dtype, layout, 50, device);
          const std::vector<bool> mask = reduced_mask(3, c.dims);
          const Shape result_shape = reduced_shape(shape, mask, c.keepdim);
          const Values values = values_of(x);
          check_tensor(bp::sum(x, c.dims, c.keepdim), result_shape, sum_dtype(dtype),
                       reduce_groups(values, shape, mask, sum_of));
          if (bp::is_floating_point(dtype)) {
            check_tensor(bp::mean(x, c.dims, c.keepdim), result_shape, dtype,
                         reduce_groups(values, shape, mask, mean_of));
          }
        }
      }
    }
  }
}

TEST_CASE("sum and mean with dtype= a wider float read the input as it is, in every layout") {
  const Shape shape = {2, 3, 4};
  const std::pair<DType, DType> widenings[] = {{bp::kFloat16, bp::kFloat32},
                                               {bp::kBFloat16, bp::kFloat32},
                                               {bp::kFloat16, bp::kFloat64},
                                               {bp::kBFloat16, bp::kFloat64},
                                               {bp::kFloat32, bp::kFloat64}};
  for (const Device device : test_devices()) {
    INFO("device " << device.str());
    for (const auto& [from, to] : widenings) {
      for (const Layout layout : kAllLayouts) {
        for (const DimsCase& c : kDimsCases) {
          INFO(name_of(from) << " as " << name_of(to) << " " << name_of(layout) << " dims "
                             << shape_string(c.dims));
          const Tensor x = sample_tensor(shape, from, layout, 52, device);
          const std::vector<bool> mask = reduced_mask(3, c.dims);
          const Shape result_shape = reduced_shape(shape, mask, c.keepdim);
          const Values values = values_of(x);
          check_tensor(bp::sum(x, c.dims, c.keepdim, to), result_shape, to,
                       reduce_groups(values, shape, mask, sum_of));
          check_tensor(bp::mean(x, c.dims, c.keepdim, to), result_shape, to,
                       reduce_groups(values, shape, mask, mean_of));
        }
      }
      check_tensor(bp::sum(bp::zeros({0, 3}, from, device), {0}, false, to), {3}, to, {0, 0, 0});
    }
    check_tensor(bp::sum(bp::zeros({0, 3}, bp::kInt32, device), {0}), {3}, bp::kInt64, {0, 0, 0});
  }
}

TEST_CASE("sum and mean: dim=None, dtype=, out=, empty and 0-dim inputs") {
  for (const Device device : test_devices()) {
    INFO("device " << device.str());
    const Tensor ints = sample_tensor({3, 5}, bp::kInt32, Layout::Transposed, 51, device);
    const double total = sum_of(values_of(ints));
    check_tensor(bp::sum(ints), {}, bp::kInt64, {total});
    check_tensor(bp::sum(ints, std::nullopt, false, bp::kFloat64), {}, bp::kFloat64, {total});
    check_tensor(bp::mean(ints, std::nullopt, true, bp::kFloat32), {1, 1}, bp::kFloat32,
                 {total / 15});

    Tensor out = empty_tensor({5}, bp::kInt64, Layout::Sliced, device);
    bp::sum_out(out, ints, {0});
    check_tensor(out, {5}, bp::kInt64,
                 reduce_groups(values_of(ints), {3, 5}, {true, false}, sum_of));

    INFO("empty: the sum of nothing is 0 and the mean NaN");
    const Tensor empty = bp::zeros({0, 3}, bp::kFloat32, device);
    check_tensor(bp::sum(empty, {0}), {3}, bp::kFloat32, {0, 0, 0});
    check_tensor(bp::sum(empty, {1}), {0}, bp::kFloat32, {});
    const double nan = std::numeric_limits<double>::quiet_NaN();
    check_tensor(bp::mean(empty, {0}), {3}, bp::kFloat32, {nan, nan, nan});

    INFO("0-dim and 1-element");
    const Tensor scalar = make_tensor({2.5}, {}, bp::kFloat64, device);
    check_tensor(bp::sum(scalar, {0}), {}, bp::kFloat64, {2.5});
    check_tensor(bp::mean(scalar, std::nullopt, true), {}, bp::kFloat64, {2.5});
    check_tensor(bp::sum(make_tensor({7}, {1}, bp::kInt8, device), {0}), {}, bp::kInt64, {7});
  }
}

TEST_CASE("amax, max.dim and argmax over dims, for every dtype and layout") {
  const Shape shape = {2, 3, 4};
  for (const Device device : test_devices()) {
    INFO("device " << device.str());
    for (const DType dtype : declared_dtypes<kernel_dtypes::amax_out, kernel_dtypes::max_dim_max,
                                             kernel_dtypes::argmax_out>()) {
      for (const Layout layout : kAllLayouts) {
        INFO(name_of(dtype) << " " << name_of(layout));
        const Tensor x = sample_tensor(shape, dtype, layout, 52, device);
        const Values values = values_of(x);
        for (const DimsCase& c : kDimsCases) {
          INFO("amax dims " << shape_string(c.dims) << (c.keepdim ? " keepdim" : ""));
          const std::vector<bool> mask = reduced_mask(3, c.dims);
          check_tensor(bp::amax(x, c.dims, c.keepdim), reduced_shape(shape, mask, c.keepdim), dtype,
                       reduce_groups(values, shape, mask, max_of));
        }
        for (const int64_t dim : {0, 1, 2, -1}) {
          for (const bool keepdim : {false, true}) {
            INFO("max.dim / argmax dim " << dim << (keepdim ? " keepdim" : ""));
            const std::vector<bool> mask = reduced_mask(3, {dim});
            const Shape result_shape = reduced_shape(shape, mask, keepdim);
            const Values indices = reduce_groups(values, shape, mask, [](const Values& g) {
              return static_cast<double>(argmax_of(g));
            });
            const auto [max_values, max_indices] = bp::max(x, dim, keepdim);
            check_tensor(max_values, result_shape, dtype,
                         reduce_groups(values, shape, mask, max_of));
            check_tensor(max_indices, result_shape, bp::kInt64, indices);
            check_tensor(bp::argmax(x, dim, keepdim), result_shape, bp::kInt64, indices);
          }
        }
        INFO("argmax of the flattened tensor");
        check_tensor(bp::argmax(x), {}, bp::kInt64, {static_cast<double>(argmax_of(values))});
        check_tensor(bp::argmax(x, std::nullopt, true), {1, 1, 1}, bp::kInt64,
                     {static_cast<double>(argmax_of(values))});
      }
    }
  }
}

TEST_CASE("max-like reductions: first maximum wins, NaN is the maximum, out= tensors") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (const Device device : test_devices()) {
    INFO("device " << device.str());
    const Tensor ties = make_tensor({1, 3, 3, 0, 2, 2, 2, 1}, {2, 4}, bp::kInt32, device);
    check_tensor(bp::argmax(ties, 1), {2}, bp::kInt64, {1, 0});
    check_tensor(bp::argmax(ties), {}, bp::kInt64, {1});

    const Tensor with_nan = make_tensor({1, nan, 5, nan, 0, 2}, {2, 3}, bp::kFloat32, device);
    check_tensor(bp::amax(with_nan, {1}), {2}, bp::kFloat32, {nan, nan});
    const auto [values, indices] = bp::max(with_nan, 1);
    check_tensor(values, {2}, bp::kFloat32, {nan, nan});
    check_tensor(indices, {2}, bp::kInt64, {1, 0});
    check_tensor(bp::argmax(with_nan), {}, bp::kInt64, {1});

    const Tensor x = sample_tensor({4, 3}, bp::kFloat64, Layout::Transposed, 53, device);
    const Values x_values = values_of(x);
    const std::vector<bool> rows = {false, true};
    Tensor max_out = empty_tensor({4}, bp::kFloat64, Layout::Sliced, device);
    Tensor index_out = empty_tensor({4}, bp::kInt64, Layout::Sliced, device);
    bp::max_out(max_out, index_out, x, 1);
    check_tensor(max_out, {4}, bp::kFloat64, reduce_groups(x_values, {4, 3}, rows, max_of));
    check_tensor(index_out, {4}, bp::kInt64,
                 reduce_groups(x_values, {4, 3}, rows,
                               [](const Values& g) { return static_cast<double>(argmax_of(g)); }));
    Tensor amax_out = empty_tensor({4}, bp::kFloat64, Layout::Contiguous, device);
    bp::amax_out(amax_out, x, {1});
    check_tensor(amax_out, {4}, bp::kFloat64, reduce_groups(x_values, {4, 3}, rows, max_of));
    Tensor argmax_out = empty_tensor({4}, bp::kInt64, Layout::Contiguous, device);
    bp::argmax_out(argmax_out, x, 1);
    check_tensor(argmax_out, {4}, bp::kInt64, values_of(index_out));

    INFO("0-dim input");
    const Tensor scalar = make_tensor({-3}, {}, bp::kInt8, device);
    check_tensor(bp::amax(scalar), {}, bp::kInt8, {-3});
    check_tensor(std::get<1>(bp::max(scalar, 0)), {}, bp::kInt64, {0});
    check_tensor(bp::argmax(scalar), {}, bp::kInt64, {0});

    INFO("an empty kept dim is fine; an empty reduced dim is refused");
    const Tensor empty = bp::zeros({0, 3}, bp::kFloat32, device);
    check_tensor(bp::amax(empty, {1}), {0}, bp::kFloat32, {});
    check_error([&] { bp::amax(empty, {0}); }, "non-zero size");
    check_error([&] { bp::max(empty, 0); }, "non-zero size");
    check_error([&] { bp::argmax(empty); }, "no elements");
  }
}

}  // namespace optest
