// embedding and index_select: rows picked by Int32 or Int64 indices, for every dtype and
// layout, and indices out of range (negative ones too, as in PyTorch) refused by name.
#include "op_test_support.h"

namespace optest {
namespace {

// `values` of shape `sizes` with dim `dim` replaced by the slices `index` names.
Values select_reference(const Values& values, const Shape& sizes, int64_t dim,
                        const std::vector<int64_t>& index) {
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= sizes[static_cast<size_t>(d)];
  for (size_t d = static_cast<size_t>(dim) + 1; d < sizes.size(); ++d) inner *= sizes[d];
  const int64_t rows = sizes[static_cast<size_t>(dim)];
  Values out;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i : index) {
      for (int64_t k = 0; k < inner; ++k) {
        out.push_back(values[static_cast<size_t>((o * rows + i) * inner + k)]);
      }
    }
  }
  return out;
}

Values as_values(const std::vector<int64_t>& ints) { return Values(ints.begin(), ints.end()); }

}  // namespace

TEST_CASE("index_select picks slices along any dim, for every dtype, layout and index type") {
  const Shape sizes = {4, 5, 3};
  const std::vector<int64_t> index = {2, 0, 4, 2, 1};
  for (const Device device : test_devices("index_select.out")) {
    INFO("device " << device.str());
    for (const DType dtype : declared_dtypes<kernel_dtypes::index_select_out>()) {
      for (const Layout layout : kAllLayouts) {
        const Tensor self = sample_tensor(sizes, dtype, layout, 401, device);
        const Values values = values_of(self);
        for (int64_t dim = 0; dim < 3; ++dim) {
          std::vector<int64_t> picks;
          for (int64_t i : index) picks.push_back(i % sizes[static_cast<size_t>(dim)]);
          for (const DType index_dtype : {bp::kInt64, bp::kInt32}) {
            INFO(name_of(dtype) << " " << name_of(layout) << " dim " << dim << " index "
                                << name_of(index_dtype));
            const Tensor idx = make_tensor(as_values(picks), {static_cast<int64_t>(picks.size())},
                                           index_dtype, device);
            Shape out_shape = sizes;
            out_shape[static_cast<size_t>(dim)] = static_cast<int64_t>(picks.size());
            check_tensor(bp::index_select(self, dim - 3, idx), out_shape, dtype,
                         select_reference(values, sizes, dim, picks));
          }
        }
      }
    }
  }
}

TEST_CASE("index_select with a strided index, a 0-D index, an empty index and out=") {
  for (const Device device : test_devices("index_select.out")) {
    INFO("device " << device.str());
    const Tensor self = sample_tensor({3, 4}, bp::kFloat32, Layout::Contiguous, 411, device);
    const Values values = values_of(self);
    const Tensor wide = make_tensor({3, 9, 0, 9, 2, 9}, {6}, bp::kInt64, device);
    const Tensor every_other = wide.slice(0, 0, 6, 2);
    check_tensor(bp::index_select(self, 1, every_other), {3, 3}, bp::kFloat32,
                 select_reference(values, {3, 4}, 1, {3, 0, 2}));
    check_tensor(self.index_select(0, make_tensor({1}, {}, bp::kInt64, device)), {1, 4},
                 bp::kFloat32, select_reference(values, {3, 4}, 0, {1}));
    check_tensor(bp::index_select(self, 0, bp::zeros({0}, bp::kInt64, device)), {0, 4},
                 bp::kFloat32, {});
    check_tensor(bp::index_select(make_tensor({7}, {}, bp::kInt32, device), 0,
                                  make_tensor({0}, {1}, bp::kInt64, device)),
                 {}, bp::kInt32, {7});
    Tensor out = empty_tensor({3, 2}, bp::kFloat32, Layout::Transposed, device);
    bp::index_select_out(out, self, -1, make_tensor({1, 3}, {2}, bp::kInt32, device));
    check_tensor(out, {3, 2}, bp::kFloat32, select_reference(values, {3, 4}, 1, {1, 3}));
  }
}

TEST_CASE("embedding looks up rows for indices of any shape and layout") {
  for (const Device device : test_devices("embedding.out")) {
    INFO("device " << device.str());
    for (const DType dtype :
         {bp::kFloat32, bp::kFloat16, bp::kBFloat16, bp::kFloat64, bp::kInt64}) {
      for (const Layout layout : kAllLayouts) {
        INFO(name_of(dtype) << " weight " << name_of(layout));
        const Tensor weight = sample_tensor({6, 5}, dtype, layout, 421, device);
        const std::vector<int64_t> ids = {5, 0, 3, 3, 1, 2};
        const Tensor indices =
            make_tensor(as_values(ids), {2, 3}, bp::kInt64, device).transpose(0, 1);
        const std::vector<int64_t> transposed_ids = {5, 3, 0, 1, 3, 2};
        check_tensor(bp::embedding(weight, indices), {3, 2, 5}, dtype,
                     select_reference(values_of(weight), {6, 5}, 0, transposed_ids));
        check_tensor(bp::embedding(weight, make_tensor({4}, {}, bp::kInt32, device)), {5}, dtype,
                     select_reference(values_of(weight), {6, 5}, 0, {4}));
      }
    }
  }
}

TEST_CASE("indices out of range, of the wrong dtype or shape are refused") {
  const Tensor weight = bp::zeros({4, 2});
  check_error(
      [&] {
        bp::embedding(weight, bp::from_vector<int64_t>({1, 4}, {2}));
      },
      "embedding: index 4 is out of range for a dimension of size 4");
  check_error([&] { bp::embedding(weight, bp::from_vector<int64_t>({-1}, {1})); },
              "index -1 is out of range");
  check_error([&] { bp::embedding(weight, bp::zeros({2}, bp::kFloat32)); },
              "expected indices of dtype Long or Int, got Float");
  check_error([&] { bp::embedding(bp::zeros({4}), bp::zeros({2}, bp::kInt64)); },
              "expected a 2-D weight");
  check_error([&] { bp::embedding(weight, bp::zeros({2}, bp::kInt64), 4); },
              "padding_idx 4 is out of range for 4 embeddings");
  check_error([&] { bp::index_select(weight, 1, bp::from_vector<int64_t>({2}, {1})); },
              "index_select: index 2 is out of range for a dimension of size 2");
  check_error(
      [&] {
        bp::index_select(weight, 0, bp::zeros({1, 1}, bp::kInt64));
      },
      "expected a 0-D or 1-D index, got shape [1, 1]");
  check_error([&] { bp::index_select(weight, 2, bp::zeros({1}, bp::kInt64)); }, "out of range");
}

TEST_CASE("indices out of range are refused on every device, also where the result is empty") {
  for (const Device device : test_devices()) {
    INFO(device.str());
    const auto indices = [&](const std::vector<int64_t>& values) {
      return bp::from_vector<int64_t>(values, {static_cast<int64_t>(values.size())}).to(device);
    };
    check_error(
        [&] {
          bp::embedding(bp::zeros({4, 2}).to(device), indices({1, 4}));
        },
        "embedding: index 4 is out of range for a dimension of size 4");
    check_error(
        [&] {
          bp::index_select(bp::zeros({4, 2}).to(device), 1, indices({0, -1}));
        },
        "index_select: index -1 is out of range for a dimension of size 2");

    INFO("the result is empty, since a dim other than the picked one is 0");
    check_error(
        [&] {
          bp::embedding(bp::zeros({10, 0}).to(device), indices({12}));
        },
        "embedding: index 12 is out of range for a dimension of size 10");
    check_error(
        [&] {
          bp::index_select(bp::zeros({3, 0}).to(device), 0, indices({1, 5}));
        },
        "index_select: index 5 is out of range for a dimension of size 3");
  }
}

TEST_CASE("of several indices out of range, every device names the first in the indices' order") {
  // Enough indices that a device's threads race to a bad one; the first in order is reported
  // whichever thread meets one first.
  std::vector<int64_t> values(1200, 1);
  values[517] = 9;
  values[518] = -3;
  values[1101] = -5;
  for (const Device device : test_devices()) {
    INFO(device.str());
    const Tensor ids = bp::from_vector<int64_t>(values, {1200}).to(device);
    check_error(
        [&] {
          bp::embedding(bp::zeros({4, 64}).to(device), ids);
        },
        "embedding: index 9 is out of range for a dimension of size 4");
    check_error(
        [&] {
          bp::index_select(bp::zeros({64, 4}).to(device), 1, ids);
        },
        "index_select: index 9 is out of range for a dimension of size 4");
    INFO(
        "read through a transposed view: values[1101] is its element (0, 367), before values[517] "
        "at (1, 172)");
    check_error(
        [&] {
          bp::embedding(bp::zeros({4, 64}).to(device), ids.view({400, 3}).transpose(0, 1));
        },
        "embedding: index -5 is out of range for a dimension of size 4");
  }
}

}  // namespace optest
