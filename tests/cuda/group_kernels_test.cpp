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
  const auto layout = bp::cuda::reduction_layout(shape, members_per_thread, target);
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

}  // namespace
