// The group kernels (reductions, softmax, layer norm and RMS norm) run on host threads through
// emulated launches (emulated_launch.h), in each of their layouts, against sums in double: teams
// narrower than a warp, of one warp and of several; rows kept in shared memory and rows too long
// for it; the column layout; groups split across blocks and combined by the last split; members
// with and without 16-byte vectors, strided ones, and partial vectors at both ends.
#include "emulated_launch.h"

#include "kernels/norm.cuh"
#include "kernels/reduce.cuh"
#include "kernels/softmax.cuh"

#include "cuda_test_support.h"
#include "kernels/launch_layout.h"
#include "runtime/tensor_access.h"

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <span>
#include <vector>

namespace {

using bp::cuda::GroupShape;
using bp::cuda::LaunchTarget;
using bp::cuda::emulated::launch;
using bp::cuda::emulated::small_device;

// A (rows x columns) matrix whose rows are `pitch` elements apart and columns `step`, starting
// `offset` elements into its buffer; reduced over columns (rows are the groups), or over rows.
struct Matrix {
  int64_t rows, columns, pitch, offset, step;
  std::vector<float> storage;

  Matrix(int64_t rows_, int64_t columns_, int64_t pitch_, int64_t offset_, uint32_t seed,
         int64_t step_ = 1)
      : rows(rows_),
        columns(columns_),
        pitch(pitch_),
        offset(offset_),
        step(step_),
        storage(static_cast<size_t>(offset_ + rows_ * pitch_)) {
    std::mt19937 random(seed);
    std::normal_distribution<float> normal(0, 2);
    for (float& v : storage) v = normal(random);
  }
  float* data() { return storage.data() + offset; }
  float& at(int64_t r, int64_t c) {
    return storage[static_cast<size_t>(offset + r * pitch + c * step)];
  }
  float at(int64_t r, int64_t c) const {
    return storage[static_cast<size_t>(offset + r * pitch + c * step)];
  }
  std::array<int64_t, 2> sizes() const { return {rows, columns}; }
  std::array<int64_t, 2> strides() const { return {pitch, step}; }
};

// The group shape of reducing `m` over its columns (over_columns) or its rows, with outputs
// of `output_strides` over the same two dims.
template <int N>
GroupShape<N> groups_of(const Matrix& m, bool over_columns,
                        const std::array<std::array<int64_t, 2>, N - 1>& outputs) {
  bp::plugin::DimValues<bool> reduced(2, false);
  reduced[over_columns ? 1 : 0] = true;
  const std::array<int64_t, 2> sizes = m.sizes(), strides = m.strides();
  std::array<std::span<const int64_t>, N> spans;
  spans[0] = strides;
  for (int k = 1; k < N; ++k) spans[static_cast<size_t>(k)] = outputs[static_cast<size_t>(k - 1)];
  return bp::cuda::group_shape<N>("test", sizes, reduced, spans);
}

// What the host reference of one group sees: the members of group g in order.
std::vector<double> members(const Matrix& m, bool over_columns, int64_t g) {
  std::vector<double> values;
  const int64_t count = over_columns ? m.columns : m.rows;
  for (int64_t p = 0; p < count; ++p) values.push_back(over_columns ? m.at(g, p) : m.at(p, g));
  return values;
}

void check_near(double actual, double expected, double tolerance) {
  REQUIRE(std::abs(actual - expected) <= tolerance * (1 + std::abs(expected)));
}

// --- reductions ----------------------------------------------------------------------------------

// The reduction as launch_reduction launches it, with `members_per_thread`.
template <typename Policy>
void run_reduction(const GroupShape<Policy::kOperands>& shape, const float* input,
                   const Policy& policy, bool columns, int64_t members_per_thread,
                   const LaunchTarget& target) {
  using Acc = typename Policy::Acc;
  const auto layout = bp::cuda::reduction_layout(shape, members_per_thread, sizeof(float), target);
  REQUIRE(layout.columns == columns);
  std::vector<Acc> partials(static_cast<size_t>(shape.groups * layout.grid.y));
  std::vector<uint32_t> counters(static_cast<size_t>(shape.groups), 0);
  launch(layout.grid, layout.block, 0, [&] {
    if (columns) {
      bp::cuda::reduce_columns<float>(shape, input, policy, partials.data(), counters.data());
    } else {
      bp::cuda::reduce_rows<float>(shape, input, policy, partials.data(), counters.data());
    }
  });
  // The last split leaves each counter ready for the next launch.
  for (const uint32_t counter : counters) CHECK(counter == 0);
}

struct ReductionCase {
  int64_t rows, columns, pitch, offset;
  bool over_columns;
  bool column_layout;
  int64_t members_per_thread;
  int multiprocessors;
  const char* what;
  int64_t step = 1;
};

void check_reductions(const ReductionCase& c) {
  INFO(c.what << ": " << c.rows << "x" << c.columns << " (pitch " << c.pitch << ", offset "
              << c.offset << ")");
  Matrix m(c.rows, c.columns, c.pitch, c.offset, 3, c.step);
  const int64_t groups = c.over_columns ? c.rows : c.columns;
  // A maximum twice in the middle group: the first one's position wins.
  const int64_t g_tie = groups / 2, count = c.over_columns ? c.columns : c.rows;
  const int64_t first_tie = count / 3, second_tie = 2 * count / 3;
  (c.over_columns ? m.at(g_tie, first_tie) : m.at(first_tie, g_tie)) = 100;
  (c.over_columns ? m.at(g_tie, second_tie) : m.at(second_tie, g_tie)) = 100;
  const std::array<int64_t, 2> out_strides =
      c.over_columns ? std::array<int64_t, 2>{1, 0} : std::array<int64_t, 2>{0, 1};
  const LaunchTarget target = small_device(c.multiprocessors);

  std::vector<float> sums(static_cast<size_t>(groups), std::nanf("")), means = sums, maxima = sums;
  std::vector<int64_t> positions(static_cast<size_t>(groups), -2);
  const auto sum_shape = groups_of<2>(m, c.over_columns, {out_strides});
  const auto max_shape = groups_of<3>(m, c.over_columns, {out_strides, out_strides});
  CHECK(bp::cuda::prefers_columns(sum_shape) == c.column_layout);
  run_reduction(sum_shape, m.data(),
                bp::cuda::SumPolicy<float>{sums.data(), false, sum_shape.group_size},
                c.column_layout, c.members_per_thread, target);
  run_reduction(sum_shape, m.data(),
                bp::cuda::SumPolicy<float>{means.data(), true, sum_shape.group_size},
                c.column_layout, c.members_per_thread, target);
  run_reduction(max_shape, m.data(), bp::cuda::MaxPolicy<float>{maxima.data(), positions.data()},
                c.column_layout, c.members_per_thread, target);
  for (int64_t g = 0; g < groups; ++g) {
    INFO("group " << g);
    const std::vector<double> values = members(m, c.over_columns, g);
    double total = 0;
    int64_t best = 0;
    for (size_t p = 0; p < values.size(); ++p) {
      total += values[p];
      if (values[p] > values[static_cast<size_t>(best)]) best = static_cast<int64_t>(p);
    }
    const auto i = static_cast<size_t>(g);
    check_near(sums[i], total, 1e-5);
    check_near(means[i], total / static_cast<double>(values.size()), 1e-5);
    CHECK(maxima[i] == values[static_cast<size_t>(best)]);
    CHECK(positions[i] == best);
  }
  CHECK(positions[static_cast<size_t>(g_tie)] == first_tie);
}

TEST_CASE("emulated reductions: row teams of every width, column slices, and split groups") {
  const std::vector<ReductionCase> cases = {
      // Rows of 37 members offset by 1 float: a scalar head of 3, vectors, a tail; teams of 2.
      {40, 37, 37, 1, true, false, 32, 1, "rows, teams narrower than a warp"},
      {9, 1000, 1003, 2, true, false, 32, 1, "rows, one warp per team"},
      {3, 3000, 3000, 0, true, false, 4, 1, "rows, teams of several warps"},
      // Members every other element, groups far apart: no vectors, and the row layout.
      {30, 50, 101, 0, true, false, 32, 1, "strided members", 2},
      {70, 45, 45, 0, false, true, 32, 1, "columns"},
      {40001, 2, 2, 0, false, true, 32, 8, "columns split across blocks"},
      {1, 70001, 70001, 3, true, false, 32, 4, "one row split across blocks"},
  };
  for (const ReductionCase& c : cases) check_reductions(c);
}

// --- softmax and the norms
// -------------------------------------------------------------------------

// Launches a cached-row kernel as its launch function would, with `members_per_thread`; returns
// whether the layout kept rows in shared memory. `kernel(cached)` calls the kernel.
template <typename Kernel>
bool run_cached_rows(int64_t groups, int64_t group_size, int64_t members_per_thread,
                     const LaunchTarget& target, Kernel kernel) {
  const bp::cuda::CachedRowLayout layout =
      bp::cuda::cached_row_layout(groups, group_size, sizeof(float), members_per_thread, 0, target);
  launch(dim3(layout.rows.blocks), dim3(layout.rows.team, layout.rows.slots), layout.shared_bytes,
         [&] { kernel(layout.cached); });
  return layout.cached;
}

struct RowCase {
  int64_t rows, columns, pitch, offset;
  int64_t members_per_thread;
  size_t shared_memory;
  bool cached;
  const char* what;
  int64_t step = 1;
};

const std::vector<RowCase> kRowCases = {
    {50, 37, 37, 1, 16, 48 * 1024, true, "teams narrower than a warp, rows in shared memory"},
    {6, 700, 701, 0, 16, 48 * 1024, true, "teams of two warps, rows in shared memory"},
    {6, 700, 701, 0, 16, 1024, false, "rows longer than shared memory"},
    {4, 3000, 3000, 2, 1, 1024, false, "teams of 512 threads, rows longer than shared memory"},
    // Input, cache and output all on 16-byte boundaries: vectors in every pass.
    {8, 1024, 1024, 0, 16, 48 * 1024, true, "aligned rows in shared memory"},
    {8, 1024, 1024, 0, 16, 1024, false, "aligned rows longer than shared memory"},
    // Members every other element: no vectors in, single members in the cache.
    {5, 300, 601, 0, 16, 48 * 1024, true, "strided members in shared memory", 2},
};

TEST_CASE("emulated softmax and log_softmax: rows in and beyond shared memory, and columns") {
  for (const RowCase& c : kRowCases) {
    for (const bool logarithm : {false, true}) {
      INFO(c.what << ", " << (logarithm ? "log_softmax" : "softmax"));
      Matrix m(c.rows, c.columns, c.pitch, c.offset, 5, c.step);
      std::vector<float> out(static_cast<size_t>(c.rows * c.columns), std::nanf(""));
      const auto shape = groups_of<2>(m, true, {std::array<int64_t, 2>{c.columns, 1}});
      CHECK(run_cached_rows(shape.groups, shape.group_size, c.members_per_thread,
                            small_device(1, c.shared_memory), [&](bool cached) {
                              bp::cuda::softmax_rows<float>(shape, m.data(), out.data(), logarithm,
                                                            cached);
                            }) == c.cached);
      for (int64_t r = 0; r < c.rows; ++r) {
        const std::vector<double> values = members(m, true, r);
        double top = -std::numeric_limits<double>::infinity(), total = 0;
        for (const double v : values) top = std::max(top, v);
        for (const double v : values) total += std::exp(v - top);
        for (int64_t k = 0; k < c.columns; ++k) {
          const double shifted = values[static_cast<size_t>(k)] - top;
          INFO("row " << r << ", member " << k);
          check_near(out[static_cast<size_t>(r * c.columns + k)],
                     logarithm ? shifted - std::log(total) : std::exp(shifted) / total, 1e-5);
        }
      }
    }
  }
  // Over the rows of a matrix: one thread per column.
  Matrix m(33, 70, 70, 0, 6);
  std::vector<float> out(33 * 70, std::nanf(""));
  const auto shape = groups_of<2>(m, false, {std::array<int64_t, 2>{70, 1}});
  REQUIRE(bp::cuda::prefers_columns(shape));
  launch(dim3(bp::cuda::grid_blocks(shape.groups, bp::cuda::kGroupBlockThreads, small_device())),
         dim3(bp::cuda::kGroupBlockThreads), 0,
         [&] { bp::cuda::softmax_columns<float>(shape, m.data(), out.data(), false); });
  for (int64_t col = 0; col < 70; ++col) {
    const std::vector<double> values = members(m, false, col);
    double top = -std::numeric_limits<double>::infinity(), total = 0;
    for (const double v : values) top = std::max(top, v);
    for (const double v : values) total += std::exp(v - top);
    for (int64_t r = 0; r < 33; ++r) {
      check_near(out[static_cast<size_t>(r * 70 + col)],
                 std::exp(values[static_cast<size_t>(r)] - top) / total, 1e-5);
    }
  }
}

TEST_CASE(
    "emulated layer norm and RMS norm: rows in and beyond shared memory, with weight and bias") {
  using bp::cuda::kNormOperands;
  for (const RowCase& c : kRowCases) {
    INFO(c.what);
    Matrix m(c.rows, c.columns, c.pitch, c.offset, 7, c.step);
    Matrix weight(1, c.columns, c.columns, 0, 8), bias(1, c.columns, c.columns, 0, 9);
    std::vector<float> out(static_cast<size_t>(c.rows * c.columns), std::nanf("")), rms_out = out;
    std::vector<float> mean(static_cast<size_t>(c.rows), std::nanf("")), rstd = mean;
    const std::array<int64_t, 2> dense{c.columns, 1}, per_row{1, 0}, per_member{0, 1};
    const auto shape =
        groups_of<kNormOperands>(m, true, {dense, per_row, per_row, per_member, per_member});
    const LaunchTarget target = small_device(1, c.shared_memory);
    const float eps = 1e-5f;
    CHECK(run_cached_rows(
              shape.groups, shape.group_size, c.members_per_thread, target, [&](bool cached) {
                bp::cuda::layer_norm_rows<float>(shape, m.data(), out.data(), mean.data(),
                                                 rstd.data(), weight.data(), bias.data(), eps,
                                                 cached);
              }) == c.cached);
    const auto rms_shape = groups_of<3>(m, true, {dense, per_member});
    run_cached_rows(rms_shape.groups, rms_shape.group_size, c.members_per_thread, target,
                    [&](bool cached) {
                      bp::cuda::rms_norm_rows<float>(rms_shape, m.data(), rms_out.data(),
                                                     weight.data(), eps, cached);
                    });
    for (int64_t r = 0; r < c.rows; ++r) {
      INFO("row " << r);
      const std::vector<double> values = members(m, true, r);
      double total = 0, squares = 0;
      for (const double v : values) total += v, squares += v * v;
      const double average = total / static_cast<double>(c.columns);
      double deviations = 0;
      for (const double v : values) deviations += (v - average) * (v - average);
      const double inverse = 1 / std::sqrt(deviations / static_cast<double>(c.columns) + eps);
      const double rms_factor = 1 / std::sqrt(squares / static_cast<double>(c.columns) + eps);
      check_near(mean[static_cast<size_t>(r)], average, 1e-5);
      check_near(rstd[static_cast<size_t>(r)], inverse, 1e-4);
      for (int64_t k = 0; k < c.columns; ++k) {
        const auto i = static_cast<size_t>(r * c.columns + k);
        const double w = weight.at(0, k), b = bias.at(0, k), v = values[static_cast<size_t>(k)];
        check_near(out[i], (v - average) * inverse * w + b, 1e-4);
        check_near(rms_out[i], v * rms_factor * w, 1e-4);
      }
    }
  }
}

// --- rows held in registers ----------------------------------------------------------------------

template <typename T>
double as_double(T value) {
  return static_cast<double>(bp::cuda::to_compute(value));
}

// Each register variant of softmax, log_softmax, layer norm and RMS norm on `rows` dense rows of
// `columns` members of T, more rows than the grid's teams so that teams walk on to a next row.
template <typename T>
void check_register_rows(int64_t rows, int64_t columns, bool affine, double tolerance) {
  using bp::cuda::kNormOperands;
  constexpr int V = bp::cuda::kVectorWidth<T>;
  const bp::cuda::RegisterRowVariant variant = bp::cuda::register_row_variant(columns, V);
  INFO(rows << " rows of " << columns << " members of " << sizeof(T) << " bytes: teams of "
            << variant.team << ", " << variant.vectors << " vectors each");
  REQUIRE(variant.team > 0);
  const Matrix m(rows, columns, columns, 0, 11);
  const Matrix w(1, columns, columns, 0, 12), b(1, columns, columns, 0, 13);
  const auto stored = [](const std::vector<float>& values) {
    std::vector<T> result;
    for (const float v : values) result.push_back(bp::cuda::from_compute<T>(v));
    return result;
  };
  const std::vector<T> input = stored(m.storage), weight = stored(w.storage),
                       bias = stored(b.storage);
  const T poison = bp::cuda::from_compute<T>(std::nanf(""));
  std::vector<T> out(input.size(), poison), mean(static_cast<size_t>(rows), poison), rstd = mean;
  const std::array<int64_t, 2> dense{columns, 1}, per_row{1, 0}, per_member{0, 1};
  const LaunchTarget target = small_device(1);
  const auto value = [&](int64_t r, int64_t k) {
    return as_double(input[static_cast<size_t>(r * columns + k)]);
  };
  const auto result = [&](int64_t r, int64_t k) {
    return as_double(out[static_cast<size_t>(r * columns + k)]);
  };

  const auto shape = groups_of<2>(m, true, {dense});
  const void* const firsts[2] = {input.data(), out.data()};
  REQUIRE(bp::cuda::rows_in_registers<T>(shape, firsts, 3));
  for (const bool logarithm : {false, true}) {
    INFO((logarithm ? "log_softmax" : "softmax"));
    std::fill(out.begin(), out.end(), poison);
    bp::cuda::launch_register_rows<T>(
        shape, target, [&](auto team, auto vectors, dim3 grid, dim3 block) {
          launch(grid, block, 0, [&] {
            bp::cuda::softmax_register_rows<T, decltype(team)::value, decltype(vectors)::value>(
                shape, input.data(), out.data(), logarithm);
          });
        });
    for (int64_t r = 0; r < rows; ++r) {
      double top = -std::numeric_limits<double>::infinity(), total = 0;
      for (int64_t k = 0; k < columns; ++k) top = std::max(top, value(r, k));
      for (int64_t k = 0; k < columns; ++k) total += std::exp(value(r, k) - top);
      for (int64_t k = 0; k < columns; ++k) {
        INFO("row " << r << ", member " << k);
        const double shifted = value(r, k) - top;
        check_near(result(r, k), logarithm ? shifted - std::log(total) : std::exp(shifted) / total,
                   tolerance);
      }
    }
  }

  const auto norm_shape =
      groups_of<kNormOperands>(m, true, {dense, per_row, per_row, per_member, per_member});
  const double eps = 1e-5;
  std::fill(out.begin(), out.end(), poison);
  bp::cuda::launch_register_rows<T>(
      norm_shape, target, [&](auto team, auto vectors, dim3 grid, dim3 block) {
        launch(grid, block, 0, [&] {
          bp::cuda::layer_norm_register_rows<T, decltype(team)::value, decltype(vectors)::value>(
              norm_shape, input.data(), out.data(), mean.data(), rstd.data(),
              affine ? weight.data() : nullptr, affine ? bias.data() : nullptr,
              static_cast<bp::cuda::compute_t<T>>(eps));
        });
      });
  std::vector<double> factors;
  for (int64_t r = 0; r < rows; ++r) {
    INFO("layer norm, row " << r);
    double total = 0, deviations = 0;
    for (int64_t k = 0; k < columns; ++k) total += value(r, k);
    const double average = total / static_cast<double>(columns);
    for (int64_t k = 0; k < columns; ++k)
      deviations += (value(r, k) - average) * (value(r, k) - average);
    const double inverse = 1 / std::sqrt(deviations / static_cast<double>(columns) + eps);
    check_near(as_double(mean[static_cast<size_t>(r)]), average, tolerance);
    check_near(as_double(rstd[static_cast<size_t>(r)]), inverse, tolerance);
    for (int64_t k = 0; k < columns; ++k) {
      INFO("member " << k);
      const auto i = static_cast<size_t>(k);
      const double scaled = (value(r, k) - average) * inverse;
      check_near(result(r, k), affine ? scaled * as_double(weight[i]) + as_double(bias[i]) : scaled,
                 tolerance);
    }
  }

  const auto rms_shape = groups_of<3>(m, true, {dense, per_member});
  std::fill(out.begin(), out.end(), poison);
  bp::cuda::launch_register_rows<T>(
      rms_shape, target, [&](auto team, auto vectors, dim3 grid, dim3 block) {
        launch(grid, block, 0, [&] {
          bp::cuda::rms_norm_register_rows<T, decltype(team)::value, decltype(vectors)::value>(
              rms_shape, input.data(), out.data(), affine ? weight.data() : nullptr,
              static_cast<bp::cuda::compute_t<T>>(eps));
        });
      });
  for (int64_t r = 0; r < rows; ++r) {
    INFO("RMS norm, row " << r);
    double squares = 0;
    for (int64_t k = 0; k < columns; ++k) squares += value(r, k) * value(r, k);
    const double factor = 1 / std::sqrt(squares / static_cast<double>(columns) + eps);
    for (int64_t k = 0; k < columns; ++k) {
      INFO("member " << k);
      const double scaled = value(r, k) * factor;
      check_near(result(r, k), affine ? scaled * as_double(weight[static_cast<size_t>(k)]) : scaled,
                 tolerance);
    }
  }
}

TEST_CASE("emulated rows in registers: every variant, teams walking on to their next row") {
  // float32, 4 members a vector: warps (rows of 4 to 512), teams of 64 to 512 threads (516 to
  // 8192), with rows of part vectors at the ends of the threads' spans.
  for (const int64_t columns : {4, 128, 132, 260, 512, 516, 2048, 4100, 8192}) {
    check_register_rows<float>(columns <= 512 ? 70 : 5, columns, columns % 8 == 4, 1e-5);
  }
  // 16-bit floats, 8 members a vector, rounded to the type at the end.
  for (const int64_t columns : {8, 264, 8192, 16384}) {
    check_register_rows<__nv_bfloat16>(columns <= 512 ? 70 : 5, columns, columns != 8192, 1e-2);
  }
  check_register_rows<__half>(9, 1032, true, 2e-3);
  // float64, 2 members a vector: rows of up to 4096.
  for (const int64_t columns : {2, 130, 4096}) {
    check_register_rows<double>(columns <= 512 ? 70 : 5, columns, true, 1e-12);
  }
}

TEST_CASE("rows in registers only where every walked operand's rows are whole aligned vectors") {
  std::vector<float> buffer(4 * 1029 + 8, 1.0f);
  const std::array<int64_t, 2> per_row{1, 0};
  const auto shape_of = [&](int64_t columns, int64_t pitch, int64_t step) {
    Matrix m(4, columns, pitch, 0, 1, step);
    return groups_of<3>(m, true, {std::array<int64_t, 2>{columns, 1}, per_row});
  };
  const auto takes = [&](const GroupShape<3>& shape, const float* input, const float* out,
                         unsigned operands) {
    const void* const firsts[3] = {input, out, buffer.data()};
    return bp::cuda::rows_in_registers<float>(shape, firsts, operands);
  };
  const float* base = buffer.data();
  CHECK(takes(shape_of(1024, 1024, 1), base, base + 4, 3));
  // Rows of 1025 members: not whole vectors.
  CHECK_FALSE(takes(shape_of(1025, 1025, 1), base, base + 4, 3));
  // Rows 1026 apart: the second row starts off the 16-byte boundary.
  CHECK_FALSE(takes(shape_of(1024, 1026, 1), base, base + 4, 3));
  // An input or an output one element past the boundary.
  CHECK_FALSE(takes(shape_of(1024, 1024, 1), base + 1, base + 4, 3));
  CHECK_FALSE(takes(shape_of(1024, 1024, 1), base, base + 1, 3));
  // Members every other element.
  CHECK_FALSE(takes(shape_of(512, 1028, 2), base, base + 4, 3));
  // Operand 2 (one value per row) is not walked member by member: its stride of 1 does not count.
  CHECK(takes(shape_of(1024, 1024, 1), base, base + 4, 3));
  CHECK_FALSE(takes(shape_of(1024, 1024, 1), base, base + 4, 7));
  // Rows longer than any variant holds.
  std::vector<float> long_rows(2 * 8196);
  Matrix m(2, 8196, 8196, 0, 1);
  const auto long_shape = groups_of<3>(m, true, {std::array<int64_t, 2>{8196, 1}, per_row});
  CHECK_FALSE(takes(long_shape, long_rows.data(), long_rows.data(), 3));
}

}  // namespace
