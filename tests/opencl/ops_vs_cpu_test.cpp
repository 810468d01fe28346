// The OpenCL kernels' own paths, each against the CPU backend on the same input: elementwise
// ops whose operands are not all dense, over walks of many work-items; group kernels with many
// lanes per group (large reductions, softmax, layer and RMS norm), batch norm, conv2d and
// pooling over images spanning many work-groups, gathers of many indices, matrix products
// spanning several tiles, fused attention over long sequences and its refusal of long heads,
// copies within one buffer, and the limit on dimensions. The op conformance suite (tests/ops)
// covers every op and dtype on small shapes. Skipped without OpenCL devices.
#include "opencl_devices.h"

#include <backplane/backplane.h>

#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <iterator>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace {

using bp::Device;
using bp::Tensor;

// Whether bp-info's description of `device` says it has double precision.
bool has_fp64(const Device& device) {
  for (const bp::PluginInfo& plugin : bp::runtime_info().plugins) {
    for (const bp::DeviceInfo& info : plugin.devices) {
      if (info.device == device) return info.description.find("fp64: yes") != std::string::npos;
    }
  }
  return false;
}

// Same shape and dtype, and every element within `tolerance` (relative, plus as much absolute
// near 0); NaN matches NaN, and an infinity itself.
void check_close(const Tensor& actual, const Tensor& expected, double tolerance,
                 const std::string& what) {
  INFO(what);
  REQUIRE(actual.sizes().vec() == expected.sizes().vec());
  REQUIRE(actual.dtype() == expected.dtype());
  const std::vector<double> a = actual.cpu().to(bp::kFloat64).contiguous().to_vector<double>();
  const std::vector<double> e = expected.to(bp::kFloat64).contiguous().to_vector<double>();
  size_t mismatches = 0;
  std::string first;
  for (size_t i = 0; i < a.size(); ++i) {
    const bool same = std::isnan(e[i]) ? std::isnan(a[i])
                                       : a[i] == e[i] || std::abs(a[i] - e[i]) <=
                                                             tolerance * (1 + std::abs(e[i]));
    if (!same && mismatches++ == 0) {
      first = "[" + std::to_string(i) + "] " + std::to_string(a[i]) + " != " + std::to_string(e[i]);
    }
  }
  CHECK_MESSAGE(mismatches == 0, mismatches << " of " << a.size() << " differ, first " << first);
}

// Random values rounded to halves, so that maxima tie, with NaN sprinkled in when asked.
Tensor sample(bp::IntArrayRef sizes, bp::DType dtype, bool with_nan = false) {
  Tensor x = bp::randn(sizes).contiguous();
  std::vector<float> values = x.to_vector<float>();
  for (size_t i = 0; i < values.size(); ++i) {
    values[i] = std::round(values[i] * 2) / 2;
    if (with_nan && i % 997 == 500) values[i] = NAN;
  }
  return bp::from_vector(values, sizes).to(dtype);
}

// A view of a tensor, taken of the CPU original and of its copy on the device alike (to()
// makes a tensor contiguous, so layouts are made after it).
struct View {
  std::string name;
  std::function<Tensor(const Tensor&)> of;
};

const std::vector<View> kViews = {
    {"contiguous", [](const Tensor& t) { return t; }},
    {"dims 0 and 2 swapped", [](const Tensor& t) { return t.transpose(0, 2); }},
    {"every 7th along dim 1", [](const Tensor& t) { return t.slice(1, 3, t.size(1), 7); }},
};

}  // namespace

// Walks that a CPU device splits into tiles of several rows, rows of several tiles, and rows of
// three elements; operands broadcast along rows or down columns, transposed inputs and outputs,
// copies between dtypes, and arange, whose values come from each element's index.
TEST_CASE("vs cpu: elementwise ops over operands that are not all dense") {
  bp::manual_seed(10);
  FOR_EACH_OPENCL_DEVICE(device) {
    for (const std::vector<int64_t>& sizes :
         std::vector<std::vector<int64_t>>{{300, 1000}, {2, 50000}, {20000, 3}}) {
      for (const bp::DType dtype : {bp::kFloat32, bp::kFloat16, bp::kBFloat16, bp::kInt64}) {
        const Tensor x = sample(sizes, dtype), y_rows = sample({sizes[1], sizes[0]}, dtype);
        const std::string where = device.str() + ", " + x.str();
        const Tensor row = sample({sizes[1]}, dtype), column = sample({sizes[0], 1}, dtype);
        const Tensor condition = bp::gt(sample({sizes[0], 1}, bp::kFloat32), 0.0);
        const Tensor y = y_rows.transpose(0, 1);
        const Tensor x_on = x.to(device), y_on = y_rows.to(device).transpose(0, 1);
        const Tensor row_on = row.to(device), column_on = column.to(device);
        check_close(bp::add(x_on, row_on), bp::add(x, row), 0, "x + row, " + where);
        check_close(bp::mul(x_on, column_on), bp::mul(x, column), 0, "x * column, " + where);
        check_close(bp::where(condition.to(device), x_on, y_on), bp::where(condition, x, y), 0,
                    "where(column, x, transposed y), " + where);
        check_close(y_on.contiguous(), y.contiguous(), 0, "transposed copy, " + where);
        check_close(y_on.to(bp::kFloat32), y.to(bp::kFloat32), 0,
                    "transposed copy to float32, " + where);
        Tensor out_on = bp::empty({sizes[1], sizes[0]}, dtype, device).transpose(0, 1);
        bp::sub_out(out_on, x_on, row_on);
        check_close(out_on, bp::sub(x, row), 0, "x - row into a transposed output, " + where);
      }
    }
    check_close(bp::arange(100003, bp::kInt64, device), bp::arange(100003, bp::kInt64), 0,
                "arange");
  }
}

TEST_CASE("vs cpu: reductions over large and small groups in any layout") {
  bp::manual_seed(11);
  FOR_EACH_OPENCL_DEVICE(device) {
    for (const bp::DType dtype : {bp::kFloat32, bp::kInt32}) {
      const Tensor base = sample({6, 1000, 20}, dtype, /*with_nan=*/dtype == bp::kFloat32);
      const Tensor base_on = base.to(device);
      for (const View& view : kViews) {
        const Tensor x = view.of(base), on = view.of(base_on);
        const std::string where = device.str() + " " + x.str() + " " + view.name;
        for (const std::vector<int64_t>& dims :
             std::vector<std::vector<int64_t>>{{0}, {1}, {2}, {0, 2}, {1, 2}, {}}) {
          check_close(bp::sum(on, dims), bp::sum(x, dims), 1e-5, "sum " + where);
          check_close(bp::amax(on, dims, true), bp::amax(x, dims, true), 0, "amax " + where);
          if (dtype == bp::kFloat32)
            check_close(bp::mean(on, dims), bp::mean(x, dims), 1e-5, "mean " + where);
        }
        for (const int64_t dim : {0, 1, 2}) {
          const auto [values, indices] = bp::max(on, dim);
          const auto [cpu_values, cpu_indices] = bp::max(x, dim);
          check_close(values, cpu_values, 0, "max.dim values " + where);
          check_close(indices, cpu_indices, 0, "max.dim indices " + where);
          check_close(bp::argmax(on, dim, true), bp::argmax(x, dim, true), 0, "argmax " + where);
        }
        check_close(bp::argmax(on), bp::argmax(x), 0, "argmax of all " + where);
      }
    }
  }
}

// On a CPU device, a sum over groups lying side by side (over a leading dim) takes 64 adjacent
// groups per work-item where a row holds 64 or more (rows of 128 and 64 groups: whole tiles; of
// 65, 100 and 130: a last tile overlapping the one before by 63, 28 or 62 groups), else 8 (rows
// of 13 and 20); one row or several (a kept dim above them), with a NaN among the members, in
// every dtype family, as sums and means, and into the leading elements of a larger buffer. Each
// shape has two tiles or more, as many as the two compute units of the CI machine's PoCL device
// need for the tiled kernels to be chosen.
TEST_CASE("vs cpu: sums over groups lying side by side, in tiles of 64 and of 8") {
  bp::manual_seed(23);
  FOR_EACH_OPENCL_DEVICE(device) {
    for (const bp::DType dtype :
         {bp::kFloat32, bp::kFloat16, bp::kBFloat16, bp::kInt32, bp::kInt64}) {
      for (const auto& [sizes, dim] :
           std::vector<std::pair<std::vector<int64_t>, int64_t>>{{{40, 128}, 0},
                                                                 {{2, 30, 64}, 1},
                                                                 {{33, 65}, 0},
                                                                 {{3, 21, 100}, 1},
                                                                 {{50, 130}, 0},
                                                                 {{30, 13}, 0},
                                                                 {{4, 9, 20}, 1}}) {
        const Tensor x = sample(sizes, dtype, /*with_nan=*/bp::is_floating_point(dtype)),
                     on = x.to(device);
        const std::string where = device.str() + " " + x.str() + " dim " + std::to_string(dim);
        const double tolerance = dtype == bp::kFloat32          ? 1e-5
                                 : bp::is_floating_point(dtype) ? 1e-2
                                                                : 0;
        const Tensor expected = bp::sum(x, {dim});
        check_close(bp::sum(on, {dim}), expected, tolerance, "sum " + where);
        if (bp::is_floating_point(dtype))
          check_close(bp::mean(on, {dim}), bp::mean(x, {dim}), tolerance, "mean " + where);
        const int64_t count = expected.numel();
        Tensor buffer = bp::full({count + 8}, 7.0, expected.dtype(), device);
        Tensor leading = buffer.slice(0, 0, count).view(expected.sizes());
        bp::sum_out(leading, on, {dim});
        check_close(leading, expected, tolerance, "sum into a larger buffer " + where);
        check_close(buffer.slice(0, count, count + 8), bp::full({8}, 7.0, expected.dtype()), 0,
                    "past the output " + where);
      }
    }
  }
}

// Groups of 27 and 8100 members are whole octets (8 members a vector) and some past them; groups
// of 5 are members past them only.
TEST_CASE("vs cpu: softmax and layer norm over large and small groups") {
  bp::manual_seed(12);
  FOR_EACH_OPENCL_DEVICE(device) {
    const Tensor base = bp::randn({5, 300, 27});
    const Tensor base_on = base.to(device);
    for (const View& view : kViews) {
      const Tensor x = view.of(base), on = view.of(base_on);
      const std::string where = device.str() + " " + x.str() + " " + view.name;
      for (const int64_t dim : {0, 1, 2}) {
        check_close(bp::softmax(on, dim), bp::softmax(x, dim), 1e-5, "softmax " + where);
        check_close(bp::log_softmax(on, dim), bp::log_softmax(x, dim), 1e-5,
                    "log_softmax " + where);
        // softmax keeps each exp in out between its passes: written over its input too.
        Tensor in_place = on.clone();
        bp::softmax_out(in_place, in_place, dim);
        check_close(in_place, bp::softmax(x, dim), 1e-5, "softmax written over its input " + where);
      }
      const int64_t last = x.size(2);
      for (const std::vector<int64_t>& normalized :
           std::vector<std::vector<int64_t>>{{last}, {x.size(1), last}}) {
        const Tensor weight = bp::randn(normalized), bias = bp::randn(normalized);
        const auto [y, mean, rstd] =
            bp::native_layer_norm(on, normalized, weight.to(device), bias.to(device), 1e-5);
        const auto [cpu_y, cpu_mean, cpu_rstd] =
            bp::native_layer_norm(x, normalized, weight, bias, 1e-5);
        check_close(y, cpu_y, 1e-4, "layer_norm " + where);
        check_close(mean, cpu_mean, 1e-5, "layer_norm mean " + where);
        check_close(rstd, cpu_rstd, 1e-4, "layer_norm rstd " + where);
      }
    }
  }
}

// Row kernels read a group's members as vectors in one of two ways: one vector access where
// every operand lays them out one element apart, else element by element. An input with dense
// rows and a weight or bias without them takes the second.
TEST_CASE("vs cpu: norms whose weight or bias does not have dense rows") {
  bp::manual_seed(18);
  FOR_EACH_OPENCL_DEVICE(device) {
    const Tensor x = bp::randn({40, 75}), on = x.to(device);
    const std::string where = device.str();
    const Tensor dense = bp::randn({75}), every_other = bp::randn({150});
    const Tensor strided = every_other.slice(0, 0, 150, 2);
    const Tensor dense_on = dense.to(device),
                 strided_on = every_other.to(device).slice(0, 0, 150, 2);
    const auto layer_norm = [](const Tensor& input, const Tensor& weight, const Tensor& bias) {
      return std::get<0>(bp::native_layer_norm(input, {75}, weight, bias, 1e-5));
    };
    check_close(layer_norm(on, strided_on, dense_on), layer_norm(x, strided, dense), 1e-4,
                "layer_norm with a strided weight " + where);
    check_close(layer_norm(on, dense_on, strided_on), layer_norm(x, dense, strided), 1e-4,
                "layer_norm with a strided bias " + where);
    check_close(std::get<0>(bp::native_layer_norm(on, {75}, std::nullopt, std::nullopt, 1e-5)),
                std::get<0>(bp::native_layer_norm(x, {75}, std::nullopt, std::nullopt, 1e-5)), 1e-4,
                "layer_norm without weight or bias " + where);
    check_close(bp::rms_norm(on, {75}, strided_on, 1e-6), bp::rms_norm(x, {75}, strided, 1e-6),
                1e-4, "rms_norm with a strided weight " + where);
    check_close(bp::rms_norm(on, {75}, std::nullopt, 1e-6),
                bp::rms_norm(x, {75}, std::nullopt, 1e-6), 1e-4,
                "rms_norm without weight " + where);
  }
}

// On a CPU device, softmax over groups lying side by side (over a leading dim) takes 64 adjacent
// groups per work-item where a row holds 64 or more (rows of 128 and 64 groups: whole tiles; of
// 65, 100 and 130: a last tile overlapping the one before by 63, 28 or 62 groups), else 8 (rows
// of 16 and 9 groups: whole tiles; of 20, 15 and 13: overlapping); one row or several (a kept dim
// above them), with NaNs in the first and the last group, an infinity and a column of -inf among
// the groups, in every floating dtype the device computes. Each shape has two tiles or more.
TEST_CASE("vs cpu: softmax over groups lying side by side, in tiles of 64 and of 8") {
  bp::manual_seed(17);
  FOR_EACH_OPENCL_DEVICE(device) {
    for (const bp::DType dtype : {bp::kFloat32, bp::kFloat16, bp::kBFloat16}) {
      for (const auto& [sizes, dim] :
           std::vector<std::pair<std::vector<int64_t>, int64_t>>{{{70, 128}, 0},
                                                                 {{2, 30, 64}, 1},
                                                                 {{66, 65}, 0},
                                                                 {{3, 40, 100}, 1},
                                                                 {{50, 130}, 0},
                                                                 {{300, 20}, 0},
                                                                 {{300, 16}, 0},
                                                                 {{64, 15}, 0},
                                                                 {{3, 50, 13}, 1},
                                                                 {{40, 2, 9}, 0}}) {
        std::vector<float> values = bp::randn(sizes).contiguous().to_vector<float>();
        const int64_t across = sizes.back();
        values[5 * across + 1] = NAN;
        values[9 * across + across - 1] = NAN;
        values[7 * across + 2] = INFINITY;
        for (size_t i = 3; i < values.size(); i += static_cast<size_t>(across))
          values[i] = -INFINITY;
        const Tensor x = bp::from_vector(values, sizes).to(dtype), on = x.to(device);
        const std::string where = device.str() + " " + x.str() + " dim " + std::to_string(dim);
        const double tolerance = dtype == bp::kFloat32 ? 1e-5 : 1e-2;
        check_close(bp::softmax(on, dim), bp::softmax(x, dim), tolerance, "softmax " + where);
        check_close(bp::log_softmax(on, dim), bp::log_softmax(x, dim), tolerance,
                    "log_softmax " + where);
        Tensor in_place = on.clone();
        bp::softmax_out(in_place, in_place, dim);
        check_close(in_place, bp::softmax(x, dim), tolerance,
                    "softmax written over its input " + where);
        // Into the leading elements of a larger buffer: nothing is written past them.
        Tensor buffer = bp::full({x.numel() + 8}, 7.0, dtype, device);
        Tensor leading = buffer.slice(0, 0, x.numel()).view(sizes);
        bp::softmax_out(leading, on, dim);
        check_close(leading, bp::softmax(x, dim), tolerance,
                    "softmax into a larger buffer " + where);
        check_close(buffer.slice(0, x.numel(), x.numel() + 8), bp::full({8}, 7.0, dtype), 0,
                    "past the output " + where);
      }
    }
  }
}

TEST_CASE("vs cpu: RMS norm over large and small groups, and batch norm per channel") {
  bp::manual_seed(15);
  FOR_EACH_OPENCL_DEVICE(device) {
    const Tensor base = bp::randn({5, 300, 27});
    const Tensor base_on = base.to(device);
    for (const View& view : kViews) {
      const Tensor x = view.of(base), on = view.of(base_on);
      const std::string where = device.str() + " " + x.str() + " " + view.name;
      const std::vector<int64_t> normalized{x.size(1), x.size(2)};
      const Tensor weight = bp::randn(normalized);
      check_close(bp::rms_norm(on, normalized, weight.to(device), 1e-6),
                  bp::rms_norm(x, normalized, weight, 1e-6), 1e-4, "rms_norm " + where);
      const int64_t channels = x.size(1);
      const Tensor mean = bp::randn({channels}), var = bp::rand({channels}).add(0.5);
      const Tensor scale = bp::randn({channels}), shift = bp::randn({channels});
      check_close(bp::batch_norm_inference(on, scale.to(device), shift.to(device), mean.to(device),
                                           var.to(device), 1e-5),
                  bp::batch_norm_inference(x, scale, shift, mean, var, 1e-5), 1e-5,
                  "batch_norm " + where);
    }
  }
}

TEST_CASE("vs cpu: conv2d and pooling over images spanning many work-groups") {
  bp::manual_seed(16);
  FOR_EACH_OPENCL_DEVICE(device) {
    const Tensor image = bp::randn({2, 16, 33, 31});
    const Tensor image_on = image.to(device);
    const Tensor weight = bp::randn({32, 8, 3, 3}).mul(0.2), bias = bp::randn({32});
    for (const bool channels_last : {false, true}) {
      // The same values in another memory order: (N, H, W, C) storage seen as (N, C, H, W).
      const auto layout = [&](const Tensor& t) {
        return channels_last ? t.permute({0, 2, 3, 1}).contiguous().permute({0, 3, 1, 2}) : t;
      };
      const Tensor x = layout(image), on = layout(image_on);
      const std::string where = device.str() + (channels_last ? " channels last" : " contiguous");
      check_close(bp::conv2d(on, weight.to(device), bias.to(device), {2, 1}, {1, 2}, {1, 2}, 2),
                  bp::conv2d(x, weight, bias, {2, 1}, {1, 2}, {1, 2}, 2), 1e-4, "conv2d " + where);
      // Rows of 75 outputs (whole blocks of columns and a tail), 6 channels per group (less than
      // a block), every other input column.
      const Tensor wide = layout(bp::randn({1, 6, 20, 150})),
                   wide_weight = bp::randn({12, 3, 3, 5}).mul(0.2);
      check_close(bp::conv2d(wide.to(device), wide_weight.to(device), std::nullopt, {1, 2}, {1, 2},
                             {2, 1}, 2),
                  bp::conv2d(wide, wide_weight, std::nullopt, {1, 2}, {1, 2}, {2, 1}, 2), 1e-4,
                  "wide conv2d " + where);
      // Blocks of 8 channels over rows of 141 and 71 outputs (input column steps 1 and 2): whole
      // blocks of columns whose taps lie inside the row or reach into the padding, and a tail.
      const Tensor rows = layout(bp::randn({1, 4, 6, 141})),
                   rows_weight = bp::randn({16, 4, 3, 3}).mul(0.2);
      for (const int64_t step : {1, 2}) {
        check_close(
            bp::conv2d(rows.to(device), rows_weight.to(device), std::nullopt, {1, step}, {1, 1}),
            bp::conv2d(rows, rows_weight, std::nullopt, {1, step}, {1, 1}), 1e-4,
            "conv2d in blocks of 8 channels, column step " + std::to_string(step) + ", " + where);
      }
      check_close(bp::max_pool2d(on, {3, 2}, {2, 2}, {1, 1}, {1, 1}, true),
                  bp::max_pool2d(x, {3, 2}, {2, 2}, {1, 1}, {1, 1}, true), 0,
                  "max_pool2d " + where);
      check_close(bp::avg_pool2d(on, {3, 3}, {2, 2}, {1, 1}, true, false),
                  bp::avg_pool2d(x, {3, 3}, {2, 2}, {1, 1}, true, false), 1e-5,
                  "avg_pool2d " + where);
      check_close(bp::adaptive_avg_pool2d(on, {5, 7}), bp::adaptive_avg_pool2d(x, {5, 7}), 1e-5,
                  "adaptive_avg_pool2d " + where);
    }
  }
}

TEST_CASE("vs cpu: embedding of many indices, and index_select along each dim") {
  bp::manual_seed(17);
  FOR_EACH_OPENCL_DEVICE(device) {
    const Tensor table = bp::randn({1000, 48});
    const Tensor indices = bp::rand({64, 37}).mul(1000).to(bp::kInt64);
    check_close(bp::embedding(table.to(device), indices.to(device)), bp::embedding(table, indices),
                0, "embedding " + device.str());
    check_close(bp::embedding(table.to(device), indices.to(device).transpose(0, 1)),
                bp::embedding(table, indices.transpose(0, 1)), 0,
                "embedding, transposed indices " + device.str());
    const Tensor source = bp::randn({30, 40, 50});
    for (const int64_t dim : {0, 1, 2}) {
      const Tensor index =
          bp::rand({100}).mul(static_cast<double>(source.size(dim))).to(bp::kInt64);
      check_close(bp::index_select(source.to(device), dim, index.to(device)),
                  bp::index_select(source, dim, index), 0,
                  "index_select along " + std::to_string(dim));
    }
    try {
      bp::embedding(table.to(device), bp::full({3}, 1000, bp::kInt64).to(device));
      FAIL("an index past the table was accepted");
    } catch (const bp::Error& error) {
      CHECK(std::string(error.what())
                .find("embedding: index 1000 is out of range for a dimension of size 1000") !=
            std::string::npos);
    }
  }
}

// Math functions of one tensor run 8 elements per work-item as vectors on a CPU device
// (whole work-groups of them, the rest element by element): over large tensors of ordinary
// values, the specials (NaN, infinities, zeros of both signs, values where tanh saturates,
// negative arguments of log and sqrt) and GELU's left tail, in every floating dtype.
TEST_CASE("vs cpu: math functions over large dense and transposed tensors") {
  bp::manual_seed(19);
  FOR_EACH_OPENCL_DEVICE(device) {
    std::vector<bp::DType> dtypes = {bp::kFloat32, bp::kFloat16, bp::kBFloat16};
    if (has_fp64(device)) dtypes.push_back(bp::kFloat64);
    std::vector<float> values = bp::randn({50001}).mul(4).to_vector<float>();
    const float specials[] = {NAN,  INFINITY, -INFINITY, 0.0f,   -0.0f,
                              9.5f, -9.5f,    30.0f,     -30.0f, -1.0f};
    for (size_t i = 0; i < values.size(); i += 97)
      values[i] = specials[(i / 97) % std::size(specials)];
    for (size_t i = 40000; i < 46000; ++i)
      values[i] = -3.0f - 0.001f * static_cast<float>(i - 40000);
    for (const bp::DType dtype : dtypes) {
      const Tensor x = bp::from_vector(values, {50001}).to(dtype), on = x.to(device);
      const std::string where = device.str() + " " + x.str();
      const double tolerance = dtype == bp::kFloat32 || dtype == bp::kFloat64 ? 1e-5 : 1e-2;
      const std::vector<std::pair<std::string, std::function<Tensor(const Tensor&)>>> functions = {
          {"exp", [](const Tensor& t) { return bp::exp(t); }},
          {"log", [](const Tensor& t) { return bp::log(t); }},
          {"sqrt", [](const Tensor& t) { return bp::sqrt(t); }},
          {"tanh", [](const Tensor& t) { return bp::tanh(t); }},
          {"sigmoid", [](const Tensor& t) { return bp::sigmoid(t); }},
          {"silu", [](const Tensor& t) { return bp::silu(t); }},
          {"gelu", [](const Tensor& t) { return bp::gelu(t); }},
          {"gelu tanh", [](const Tensor& t) { return bp::gelu(t, "tanh"); }},
      };
      // The same elements transposed: the strided form, 8 columns at a time where out's rows are
      // consecutive, with a tail (1003 = 125 * 8 + 3).
      const Tensor transposed = x.slice(0, 0, 1003 * 49).view({1003, 49}).transpose(0, 1);
      const Tensor transposed_on = on.slice(0, 0, 1003 * 49).view({1003, 49}).transpose(0, 1);
      for (const auto& [name, function] : functions) {
        check_close(function(transposed_on), function(transposed), tolerance,
                    name + " transposed " + where);
        const Tensor got = function(on), want = function(x);
        check_close(got, want, tolerance, name + " " + where);
        if (dtype != bp::kFloat16 && dtype != bp::kBFloat16) continue;
        // Both round nearly the same float to 16 bits, so they agree but where the floats
        // straddle a rounding boundary: on up to 5% of the elements (tanh-GELU, whose formula
        // differs most), where rounding down instead would disagree on about half of them.
        const std::vector<float> a = got.cpu().to(bp::kFloat32).to_vector<float>();
        const std::vector<float> e = want.to(bp::kFloat32).to_vector<float>();
        size_t differ = 0;
        for (size_t i = 0; i < a.size(); ++i)
          differ += !(a[i] == e[i] || (std::isnan(a[i]) && std::isnan(e[i])));
        CHECK_MESSAGE(differ < a.size() / 10, differ << " of " << a.size()
                                                     << " differ from the CPU's in the last bit, "
                                                     << name << " " << where);
      }
      if (dtype != bp::kFloat32) continue;
      // GELU's left tail, relative to its tiny values (gelu(-9) is about -1e-18).
      const std::vector<float> got = bp::gelu(on).cpu().to_vector<float>();
      const std::vector<float> want = bp::gelu(x).to_vector<float>();
      size_t off = 0;
      for (size_t i = 40000; i < 46000; ++i) off += !(std::abs(got[i] / want[i] - 1) <= 1e-4f);
      CHECK_MESSAGE(off == 0,
                    off << " of GELU's left tail differ by more than 1e-4 relative on " << where);
    }
  }
}

TEST_CASE("vs cpu: exact GELU keeps its relative accuracy in the left tail") {
  FOR_EACH_OPENCL_DEVICE(device) {
    // gelu(-9) is about -1e-18: 1 + erf(x / sqrt 2) would have cancelled to 0 long before.
    const Tensor x = bp::arange(0, 600, 1, bp::kFloat32).mul(-0.01).sub(3);  // -3 ... -8.99
    const std::vector<float> got = bp::gelu(x.to(device)).cpu().to_vector<float>();
    const std::vector<float> want = bp::gelu(x).to_vector<float>();
    size_t off = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      if (!(std::abs(got[i] / want[i] - 1) <= 1e-4f) && off++ == 0) {
        CHECK_MESSAGE(false, "gelu(" << -3 - 0.01 * static_cast<double>(i) << ") = " << got[i]
                                     << " on " << device.str() << ", " << want[i] << " on cpu");
      }
    }
    CHECK_MESSAGE(off == 0, off << " of " << got.size() << " differ by more than 1e-4 relative");
  }
}

TEST_CASE("vs cpu: matrix products spanning several tiles in any layout") {
  bp::manual_seed(13);
  FOR_EACH_OPENCL_DEVICE(device) {
    // 8-byte types take another block depth (see kernels/matmul.cl).
    std::vector<bp::DType> dtypes = {bp::kFloat32, bp::kInt32, bp::kFloat16, bp::kInt64};
    if (has_fp64(device)) dtypes.push_back(bp::kFloat64);
    for (const bp::DType dtype : dtypes) {
      const double tolerance = dtype == bp::kFloat16 ? 1e-2 : 1e-5;
      for (const auto& [n, k, m] :
           {std::tuple<int64_t, int64_t, int64_t>{1, 1, 1}, {17, 33, 5}, {70, 50, 90}}) {
        // b and batch_a transposed, in both places.
        const Tensor a = sample({n, k}, dtype), b_rows = sample({m, k}, dtype);
        const Tensor b = b_rows.transpose(0, 1), b_on = b_rows.to(device).transpose(0, 1);
        const std::string where = device.str() + " " + a.str() + " @ " + b.str();
        check_close(bp::mm(a.to(device), b_on), bp::mm(a, b), tolerance, "mm " + where);
        const Tensor bias = sample({m}, dtype);
        check_close(bp::addmm(bias.to(device), a.to(device), b_on, 2, 3),
                    bp::addmm(bias, a, b, 2, 3), tolerance, "addmm " + where);
        const Tensor batch_a_rows = sample({3, k, n}, dtype), batch_b = sample({3, k, m}, dtype);
        check_close(bp::bmm(batch_a_rows.to(device).transpose(1, 2), batch_b.to(device)),
                    bp::bmm(batch_a_rows.transpose(1, 2), batch_b), tolerance, "bmm " + where);
      }
    }
    // beta == 0 ignores self, even NaN.
    const Tensor nan_self = bp::full({4, 4}, NAN);
    const Tensor a = bp::randn({4, 6}), b = bp::randn({6, 4});
    check_close(bp::addmm(nan_self.to(device), a.to(device), b.to(device), 0, 1),
                bp::addmm(nan_self, a, b, 0, 1), 1e-5, "addmm with beta 0 on " + device.str());
  }
}

TEST_CASE("vs cpu: fused attention over many key chunks, with heads laid out across the sequence") {
  bp::manual_seed(17);
  FOR_EACH_OPENCL_DEVICE(device) {
    // Heads as attention layers make them: (batch, seq, heads, E) viewed as (batch, heads, seq,
    // E), so the leading dims do not merge; 300 keys are many chunks with a tail, and a head
    // dim of 60 is whole groups of partial sums with a tail.
    const auto heads = [&](int64_t seq, int64_t e) {
      return sample({2, seq, 3, e}, bp::kFloat32).mul(0.25);
    };
    const Tensor q = heads(200, 60), k = heads(300, 60), v = heads(300, 32);
    const auto on = [&](const Tensor& t) { return t.to(device).transpose(1, 2); };
    const auto cpu = [](const Tensor& t) { return t.transpose(1, 2); };
    for (const bool causal : {false, true}) {
      const std::string what = device.str() + (causal ? " causal" : " not causal");
      check_close(bp::_scaled_dot_product_fused_attention(on(q), on(k), on(v), causal),
                  bp::_scaled_dot_product_fused_attention(cpu(q), cpu(k), cpu(v), causal), 1e-5,
                  "fused attention " + what);
      check_close(
          bp::scaled_dot_product_attention(on(q), on(k), on(v), std::nullopt, 0.0, causal),
          bp::scaled_dot_product_attention(cpu(q), cpu(k), cpu(v), std::nullopt, 0.0, causal), 1e-5,
          "scaled_dot_product_attention " + what);
    }
  }
}

TEST_CASE(
    "vs cpu: head dims past the fused kernel's are refused by it and take the composite path") {
  bp::manual_seed(19);
  FOR_EACH_OPENCL_DEVICE(device) {
    const Tensor q = sample({2, 5, 300}, bp::kFloat32).mul(0.1),
                 k = sample({2, 7, 300}, bp::kFloat32).mul(0.1);
    const Tensor v = sample({2, 7, 4}, bp::kFloat32);
    try {
      bp::_scaled_dot_product_fused_attention(q.to(device), k.to(device), v.to(device));
      FAIL("the fused kernel took a head dim of 300");
    } catch (const bp::Error& e) {
      CHECK(e.code() == bp::ErrorCode::NotImplemented);
      CHECK(std::string(e.what()).find("head dims up to 256") != std::string::npos);
    }
    check_close(bp::scaled_dot_product_attention(q.to(device), k.to(device), v.to(device)),
                bp::scaled_dot_product_attention(q, k, v), 1e-5,
                "composite path on " + device.str());
  }
}

TEST_CASE("copies: a copy within one buffer reads every element before writing over it") {
  FOR_EACH_OPENCL_DEVICE(device) {
    std::vector<float> values(25);
    for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i);
    const Tensor square = bp::from_vector(values, {5, 5});
    for (const bp::DType dtype : {bp::kFloat32, bp::kInt64}) {
      INFO(device.str() << " " << bp::dtype_name(dtype));
      Tensor row = square.slice(0, 0, 1).flatten().to(dtype).to(device);
      row.slice(0, 1, 5).copy_(row.slice(0, 0, 4));  // shifts right, as memmove would
      CHECK(row.cpu().to(bp::kFloat32).to_vector<float>() == std::vector<float>{0, 0, 1, 2, 3});
      Tensor matrix = square.to(dtype).to(device);
      matrix.copy_(matrix.transpose(0, 1));  // transposes in place
      check_close(matrix, square.transpose(0, 1).contiguous().to(dtype), 0, "in-place transpose");
    }
  }
}

TEST_CASE("dimensions: tensors with more than 8 dimensions that cannot be merged") {
  bp::manual_seed(14);
  FOR_EACH_OPENCL_DEVICE(device) {
    const Tensor base = bp::randn({2, 3, 2, 3, 2, 3, 2, 3, 2, 3});
    const std::vector<int64_t> reversed = {9, 8, 7, 6, 5, 4, 3, 2, 1, 0};
    const Tensor cpu = base.permute(reversed);
    const Tensor x = base.to(device).permute(reversed);  // to() would make it contiguous
    // Elementwise kernels take 8; the host walks the rest.
    check_close(bp::neg(x), bp::neg(cpu), 0, "neg");
    check_close(x.contiguous(), cpu.contiguous(), 0, "contiguous");
    check_close(bp::add(x, x.contiguous()), bp::add(cpu, cpu.contiguous()), 0, "add");
    // Group kernels refuse, with a message that says what to do.
    try {
      bp::amax(x);
      FAIL("amax over 10 scattered dimensions did not fail");
    } catch (const bp::Error& e) {
      CHECK(e.code() == bp::ErrorCode::NotImplemented);
      CHECK_MESSAGE(std::string(e.what()).find("make it contiguous first") != std::string::npos,
                    e.what());
    }
    check_close(bp::amax(x.contiguous()), bp::amax(cpu), 0, "amax after contiguous()");
  }
}
