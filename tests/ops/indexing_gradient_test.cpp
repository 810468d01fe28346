// The gradients of the index ops: embedding_dense_backward and index_add, which add slices into
// the ones an index names, repeated indices included.
#include "op_test_support.h"

namespace optest {
namespace {

// self with alpha * source's slices along `dim` added into the slices `index` names.
Values index_add_reference(Values self, const Shape& sizes, int64_t dim,
                           const std::vector<int64_t>& index, const Values& source,
                           double alpha) {
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= sizes[static_cast<size_t>(d)];
  for (size_t d = static_cast<size_t>(dim) + 1; d < sizes.size(); ++d) inner *= sizes[d];
  const int64_t rows = sizes[static_cast<size_t>(dim)];
  const auto n = static_cast<int64_t>(index.size());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t k = 0; k < inner; ++k) {
        self[static_cast<size_t>((o * rows + index[static_cast<size_t>(i)]) * inner + k)] +=
            alpha * source[static_cast<size_t>((o * n + i) * inner + k)];
      }
    }
  }
  return self;
}

}  // namespace

TEST_CASE("index_add adds alpha times source's slices along any dim, repeats included") {
  const Shape shape = {3, 4, 5};
  const std::vector<int64_t> index = {2, 0, 2, 3, 2};
  for (const Device device : test_devices("index_add.out")) {
    for (const DType dtype : declared_dtypes<kernel_dtypes::index_add_out>()) {
      for (const Layout layout : kAllLayouts) {
        for (const int64_t dim : {0, 1, 2, -1}) {
          INFO(device.str() << " " << name_of(dtype) << " " << name_of(layout) << " dim " << dim);
          const int64_t wrapped = dim < 0 ? dim + 3 : dim;
          if (shape[static_cast<size_t>(wrapped)] <= 3) continue;  // the index names row 3
          Shape source_shape = shape;
          source_shape[static_cast<size_t>(wrapped)] = static_cast<int64_t>(index.size());
          const Tensor self = sample_tensor(shape, dtype, layout, 100, device);
          const Tensor source = sample_tensor(source_shape, dtype, Layout::Transposed, 101, device);
          const double alpha = bp::is_floating_point(dtype) ? 0.5 : 2;
          const bp::Scalar alpha_scalar = bp::is_floating_point(dtype)
                                              ? bp::Scalar(alpha)
                                              : bp::Scalar(static_cast<int64_t>(alpha));
          const Tensor indices = make_tensor(Values(index.begin(), index.end()),
                                             {static_cast<int64_t>(index.size())}, bp::kInt32,
                                             device);
          Values expected = index_add_reference(values_of(self), shape, wrapped, index,
                                                values_of(source), alpha);
          for (double& v : expected) v = stored_as(dtype, v);
          check_tensor(bp::index_add(self, dim, indices, source, alpha_scalar), shape, dtype,
                       expected);
        }
      }
    }
  }
}

TEST_CASE("index_add: out=, a 0-D self, an empty index, and indices out of range") {
  for (const Device device : test_devices("index_add.out")) {
    const Tensor self = make_tensor({1, 2, 3}, {3}, bp::kFloat32, device);
    Tensor out = empty_tensor({3}, bp::kFloat32, Layout::Sliced, device);
    const Tensor index = make_tensor({1, 1}, {2}, bp::kInt64, device);
    bp::index_add_out(out, self, 0, index, make_tensor({10, 20}, {2}, bp::kFloat32, device));
    check_tensor(out, {3}, bp::kFloat32, {1, 32, 3});
    check_tensor(bp::index_add(make_tensor({1}, {}, bp::kFloat64, device), 0,
                               make_tensor({0}, {}, bp::kInt64, device),
                               make_tensor({4}, {}, bp::kFloat64, device), 2),
                 {}, bp::kFloat64, {9});
    check_tensor(bp::index_add(self, 0, bp::zeros({0}, bp::kInt64, device),
                               bp::zeros({0}, bp::kFloat32, device)),
                 {3}, bp::kFloat32, {1, 2, 3});
    check_error([&] {
      bp::index_add(self, 0, make_tensor({-1}, {1}, bp::kInt64, device),
                    bp::zeros({1}, bp::kFloat32, device));
    }, "index_add: index -1 is out of range for a dimension of size 3");
  }
}

TEST_CASE("embedding_dense_backward sums grad rows into the rows the indices name") {
  const std::vector<int64_t> index = {3, 0, 3, 1, 3, 0};
  const int64_t rows = 5, width = 4;
  for (const Device device : test_devices("embedding_dense_backward.out")) {
    for (const DType dtype :
         declared_dtypes<kernel_dtypes::embedding_dense_backward_out>()) {
      for (const Layout layout : kAllLayouts) {
        for (const int64_t padding_idx : {int64_t{-1}, int64_t{0}, int64_t{-2}}) {
          for (const bool scale : {false, true}) {
            INFO(device.str() << " " << name_of(dtype) << " " << name_of(layout)
                              << " padding_idx " << padding_idx << " scale " << scale);
            const Tensor indices =
                make_tensor(Values(index.begin(), index.end()), {2, 3}, bp::kInt64, device);
            const Tensor grad = sample_tensor({2, 3, width}, dtype, layout, 110, device);
            const Values g = values_of(grad);
            const int64_t padding_row = padding_idx < -1 ? padding_idx + rows : padding_idx;
            std::vector<int64_t> counts(rows);
            for (const int64_t i : index) ++counts[static_cast<size_t>(i)];
            Values expected(static_cast<size_t>(rows * width));
            for (size_t p = 0; p < index.size(); ++p) {
              const int64_t row = index[p];
              if (row == padding_row) continue;
              const double factor = scale ? 1.0 / static_cast<double>(counts[row]) : 1.0;
              for (int64_t k = 0; k < width; ++k) {
                expected[static_cast<size_t>(row * width + k)] +=
                    factor * g[p * static_cast<size_t>(width) + static_cast<size_t>(k)];
              }
            }
            check_tensor(bp::embedding_dense_backward(grad, indices, rows, padding_idx, scale),
                         {rows, width}, dtype, expected);
          }
        }
      }
    }
  }
}

TEST_CASE("embedding_dense_backward of many indices is the same on any split of the rows") {
  const int64_t count = 20000, rows = 7, width = 9;
  for (const Device device : test_devices("embedding_dense_backward.out")) {
    Values index_values;
    for (int64_t i = 0; i < count; ++i) index_values.push_back(static_cast<double>(i * 5 % rows));
    const Tensor indices = make_tensor(index_values, {count}, bp::kInt32, device);
    const Tensor grad = sample_tensor({count, width}, bp::kFloat32, Layout::Contiguous, 111,
                                      device);
    const Values g = values_of(grad);
    Values expected(static_cast<size_t>(rows * width));
    for (int64_t i = 0; i < count; ++i) {
      for (int64_t k = 0; k < width; ++k) {
        expected[static_cast<size_t>(static_cast<int64_t>(index_values[i]) * width + k)] +=
            g[static_cast<size_t>(i * width + k)];
      }
    }
    check_tensor(bp::embedding_dense_backward(grad, indices, rows, -1, false), {rows, width},
                 bp::kFloat32, expected);
  }
}

}  // namespace optest
