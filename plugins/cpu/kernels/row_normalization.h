// The arithmetic of softmax, log_softmax, layer norm and RMS norm on groups of elements: one
// group at a time on a contiguous row of its compute type (softmax_span, moments_of,
// reciprocal_root_mean_square, normalize_span), and groups lying side by side a tile at a time,
// in passes that each meet a row of the input with a row of per-group values
// (softmax_side_by_side, normalize_side_by_side).
#pragma once

#include "kernels/multiversion.h"
#include "kernels/nan_propagation.h"
#include "kernels/partial_sums.h"
#include "kernels/prefetch.h"
#include "kernels/reduction_loops.h"
#include "kernels/row_conversion.h"
#include "kernels/softmax_row.h"
#include "kernels/strided_loop.h"
#include "kernels/transcendental.h"
#include "kernels/vector_types.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

namespace bp::cpu {

// softmax (or log_softmax, when `log`) of x[0..n) into y[0..n); y may be x. Subtracting the
// maximum first keeps exp from overflowing. A row with a NaN, or an infinite maximum (+inf, or
// every element -inf), is all NaN, as exp(x - max) / sum gives it: some x - max is NaN there.
template <typename C>
BP_CPU_MULTIVERSIONED void softmax_span(const C* x, C* y, int64_t n, bool log,
                                        const NextRows<C>& next) {
  const C max = max_of(x, n);
  if (!std::isfinite(max)) {
    std::fill_n(y, n, std::numeric_limits<C>::quiet_NaN());
    return;
  }
  if (log) {  // the exps are only summed: y may be x, which the last pass still reads
    const C log_sum =
        static_cast<C>(std::log(exp_shifted_and_sum(x, static_cast<C*>(nullptr), n, max, next)));
    for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - max) - log_sum;
  } else {
    const C scale = static_cast<C>(1.0 / exp_shifted_and_sum(x, y, n, max, next));
    for (int64_t i = 0; i < n; ++i) y[i] *= scale;
  }
}

// Groups that the side-by-side kernels below normalise at once: their per-group values (16 KB
// of them for float32 softmax) stay in the L1 cache while each pass streams rows of the tile past
// them. Wider tiles read longer stretches of each row, which the hardware prefetcher follows
// better.
inline constexpr int64_t kNormalizationTile = 1024;

// Walks `count` groups lying side by side (group j's elements at `first` + j * `step` in
// operands 0, the input, and 1, the output) a tile of kNormalizationTile groups at a time: calls
// tile_fn(tile_first, width, for_each_row, in_step, out_step) for each tile of `width` groups,
// where for_each_row(fn) calls fn(in_at, out_at, position) for each member position of the
// tile's groups, with the offsets of the tile's first group's elements there; group j's are
// j * in_step and j * out_step further. Both steps are compile-time 1 when the groups are
// adjacent in both operands, so that the kernels' loops over j vectorise.
template <size_t N, typename TileFn>
void for_each_side_by_side_tile(const ReductionLoops<N>& loops, const Offsets<N>& first,
                                const Offsets<N>& step, int64_t count, TileFn&& tile_fn) {
  const auto walk = [&](auto in_step, auto out_step) {
    for (int64_t tile = 0; tile < count; tile += kNormalizationTile) {
      const int64_t width = std::min(kNormalizationTile, count - tile);
      Offsets<N> tile_first = first;
      advance(tile_first, step, tile);
      const auto for_each_row = [&](auto&& fn) {
        int64_t position = 0;
        loops.for_each_row_in_group(
            tile_first, [&](const Offsets<N>& start, const Offsets<N>& row_step, int64_t length) {
              for (int64_t i = 0; i < length; ++i, ++position) {
                fn(start[0] + i * row_step[0], start[1] + i * row_step[1], position);
              }
            });
      };
      tile_fn(static_cast<const Offsets<N>&>(tile_first), width, for_each_row, in_step, out_step);
    }
  };
  if (step[0] == 1 && step[1] == 1) {
    walk(kUnitStep, kUnitStep);
  } else {
    walk(step[0], step[1]);
  }
}

// Where the output's groups are not side by side (a norm of a transposed input into a new
// tensor), one row's outputs land on as many cache lines and pages as the tile has groups, so
// output passes write kScatteredGroups groups at a time, whose lines stay cached.
inline constexpr int64_t kScatteredGroups = 64;

// Calls fn(begin, end) over [0, width): at once where out_step is 1, else kScatteredGroups at a
// time.
template <typename Step, typename Fn>
void for_each_output_part(int64_t width, Step out_step, Fn&& fn) {
  const int64_t part = out_step == 1 ? width : kScatteredGroups;
  for (int64_t begin = 0; begin < width; begin += part) fn(begin, std::min(width, begin + part));
}

// softmax_span's arithmetic for groups lying side by side, in three passes over each tile's
// rows: the groups' maxima, then their sums of exps, then the outputs. Each pass meets a row of
// the input with a row of per-group values, so that its loops run along adjacent elements,
// where one group at a time would read one element of every row.
template <typename T>
BP_CPU_MULTIVERSIONED void softmax_side_by_side(const ReductionLoops<2>& loops,
                                                const Offsets<2>& first, const Offsets<2>& step,
                                                int64_t count, const T* input, T* output,
                                                bool log) {
  using C = compute_t<T>;
  C max[kNormalizationTile];
  double sums[kNormalizationTile];
  C factor[kNormalizationTile];  // 1 / sum, or for log_softmax log(sum)
  C row[kNormalizationTile];     // a row of the input in C, where it is not C already
  C results[kNormalizationTile];
  for_each_side_by_side_tile(
      loops, first, step, count,
      [&](const Offsets<2>&, int64_t width, const auto& for_each_row, auto in_step, auto out_step) {
        std::fill_n(max, width, -std::numeric_limits<C>::infinity());
        for_each_row([&](int64_t in_at, int64_t, int64_t) {
          const C* x = row_in_compute_type(input + in_at, width, in_step, row);
          for (int64_t j = 0; j < width; ++j) max[j] = max_keeping_nan(max[j], x[j]);
        });
        std::fill_n(sums, width, 0.0);
        for_each_row([&](int64_t in_at, int64_t, int64_t) {
          const C* x = row_in_compute_type(input + in_at, width, in_step, row);
          for (int64_t j = 0; j < width; ++j) sums[j] += static_cast<double>(exp_of(x[j] - max[j]));
        });
        // A NaN or an infinite maximum makes the whole group NaN, as in softmax_span: some x - max
        // is NaN there, and so are the sum, the factor and every output.
        for (int64_t j = 0; j < width; ++j) {
          factor[j] = static_cast<C>(log ? std::log(sums[j]) : 1.0 / sums[j]);
        }
        for_each_output_part(width, out_step, [&](int64_t begin, int64_t end) {
          for_each_row([&](int64_t in_at, int64_t out_at, int64_t) {
            const C* x =
                row_in_compute_type(input + in_at + begin * in_step, end - begin, in_step, row);
            store_row(output + out_at, begin, end, out_step, results, [&](int64_t j) {
              const C shifted = x[j - begin] - max[j];
              return log ? shifted - factor[j] : exp_of(shifted) * factor[j];
            });
          });
        });
      });
}

// Layer norm or RMS norm of groups lying side by side, a tile at a time, as normalize_span
// computes each group (in double): passes over the tile's rows for each group's statistics (the
// mean, then the squared deviations from it; for RMS norm the squares alone), then one writing
// y = (x - mean) * rstd * weight + bias, with weight and bias (when present) per member
// position. store_moments(tile_first, j, mean, rstd) gets each group's statistics.
template <typename T, size_t N, typename StoreMoments>
BP_CPU_MULTIVERSIONED void normalize_side_by_side(const ReductionLoops<N>& loops,
                                                  const Offsets<N>& first, const Offsets<N>& step,
                                                  int64_t count, const T* input, T* output,
                                                  bool rms, double eps, const double* weight,
                                                  const double* bias,
                                                  StoreMoments&& store_moments) {
  using C = compute_t<T>;
  const double members = static_cast<double>(loops.group_size());
  double mean[kNormalizationTile];
  double rstd[kNormalizationTile];
  double first_row[kNormalizationTile];
  C row[kNormalizationTile];  // a row of the input in C, where it is not C already
  C results[kNormalizationTile];
  for_each_side_by_side_tile(
      loops, first, step, count,
      [&](const Offsets<N>& tile_first, int64_t width, const auto& for_each_row, auto in_step,
          auto out_step) {
        std::fill_n(mean, width, 0.0);
        if (!rms) {
          // Summed as deviations from the first row, as moments_of does, so that a group of equal
          // members has exactly their value as its mean.
          std::fill_n(first_row, width, 0.0);
          bool first = true;
          for_each_row([&](int64_t in_at, int64_t, int64_t) {
            const C* x = row_in_compute_type(input + in_at, width, in_step, row);
            if (first) {
              for (int64_t j = 0; j < width; ++j) first_row[j] = static_cast<double>(x[j]);
              first = false;
            }
            for (int64_t j = 0; j < width; ++j) mean[j] += static_cast<double>(x[j]) - first_row[j];
          });
          // Over no members, the mean is 0 / 0 = NaN, as in normalize_span.
          for (int64_t j = 0; j < width; ++j) mean[j] = first_row[j] + mean[j] / members;
        }
        std::fill_n(rstd, width, 0.0);  // the sums of squared deviations, first
        for_each_row([&](int64_t in_at, int64_t, int64_t) {
          const C* x = row_in_compute_type(input + in_at, width, in_step, row);
          for (int64_t j = 0; j < width; ++j) {
            const double deviation = static_cast<double>(x[j]) - mean[j];
            rstd[j] += deviation * deviation;
          }
        });
        for (int64_t j = 0; j < width; ++j) {
          rstd[j] = 1.0 / std::sqrt(rstd[j] / members + eps);
          store_moments(tile_first, j, mean[j], rstd[j]);
        }
        for_each_output_part(width, out_step, [&](int64_t begin, int64_t end) {
          for_each_row([&](int64_t in_at, int64_t out_at, int64_t position) {
            const double scale = weight ? weight[position] : 1.0;
            const double shift = bias ? bias[position] : 0.0;
            const C* x =
                row_in_compute_type(input + in_at + begin * in_step, end - begin, in_step, row);
            store_row(output + out_at, begin, end, out_step, results, [&](int64_t j) {
              const double normalized = (static_cast<double>(x[j - begin]) - mean[j]) * rstd[j];
              return static_cast<C>(bias ? normalized * scale + shift : normalized * scale);
            });
          });
        });
      });
}

// A group's mean and 1 / sqrt(variance + eps), accumulated in double.
struct Moments {
  double mean;
  double rstd;
};

// Both sum deviations from k = x[0], an element of the group, so that a group of equal members
// has exactly their value as its mean (and y = 0, not the rounding error of a mean, times a
// large rstd). For float elements, one pass sums x - k and (x - k)^2: k lies within a few
// standard deviations of the mean, so E[(x-k)^2] - E[x-k]^2 cancels only a few of double's 29
// bits beyond float's, far from the float result. For double elements, which have no bits to
// spare, two passes: the mean, then the squared deviations.
template <typename C>
BP_CPU_MULTIVERSIONED Moments moments_of(const C* x, int64_t n, double eps) {
  const double count = static_cast<double>(n);
  if constexpr (std::is_same_v<C, float>) {
    const double shift = n > 0 ? x[0] : 0.0;
    // Vectors of kLanesOf<double> floats, widened to one Vector<double> each.
    typedef float Narrow __attribute__((vector_size(kVectorBytes / 2)));  // NOLINT
    constexpr int64_t kWidth = kLanesOf<double>;
    Vector<double> sums[2] = {};
    Vector<double> squares[2] = {};
    int64_t i = 0;
    for (; i + 2 * kWidth <= n; i += 2 * kWidth) {
      for (int64_t half = 0; half < 2; ++half) {
        Narrow values;
        std::memcpy(&values, x + i + kWidth * half, sizeof(values));
        const Vector<double> deviation = __builtin_convertvector(values, Vector<double>) - shift;
        sums[half] += deviation;
        squares[half] += deviation * deviation;
      }
    }
    double sum = 0;
    double square_sum = 0;
    for (; i < n; ++i) {
      const double deviation = static_cast<double>(x[i]) - shift;
      sum += deviation;
      square_sum += deviation * deviation;
    }
    for (int64_t k = 0; k < kWidth; ++k) {
      sum += sums[0][k] + sums[1][k];
      square_sum += squares[0][k] + squares[1][k];
    }
    const double mean_deviation = sum / count;
    const double variance = std::max(square_sum / count - mean_deviation * mean_deviation, 0.0);
    return {shift + mean_deviation, 1.0 / std::sqrt(variance + eps)};
  } else {
    const double shift = n > 0 ? static_cast<double>(x[0]) : 0.0;
    PartialSums<double> sums;
    sums.add(x, n, [shift](double value) { return value - shift; });
    const double mean = shift + sums.total() / count;
    PartialSums<double> squares;
    squares.add(x, n, [mean](double value) {
      const double deviation = value - mean;
      return deviation * deviation;
    });
    return {mean, 1.0 / std::sqrt(squares.total() / count + eps)};
  }
}

// 1 / sqrt(mean(x^2) + eps), the mean in double.
template <typename C>
BP_CPU_MULTIVERSIONED double reciprocal_root_mean_square(const C* x, int64_t n, double eps) {
  PartialSums<double> squares;
  squares.add(x, n, [](double value) { return value * value; });
  return 1.0 / std::sqrt(squares.total() / static_cast<double>(n) + eps);
}

// y = (x - mean) * rstd * weight + bias over one group, in double, so that y rounds once even
// where the bias cancels the rest; weight and bias may be absent (null).
template <typename C>
BP_CPU_MULTIVERSIONED void normalize_span(const C* x, C* y, int64_t n, Moments moments,
                                          const double* weight, const double* bias,
                                          const NextRows<C>& next) {
  // (x - mean) * rstd, not x * rstd - mean * rstd as one fused multiply-add: that leaves the
  // rounding error of mean * rstd where x equals the mean, and a constant group would not
  // normalise to 0.
  const auto normalize = [&](auto with_weight, auto with_bias) {
    for_each_block_prefetching(n, next, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        double value = (static_cast<double>(x[i]) - moments.mean) * moments.rstd;
        if constexpr (with_weight) value *= weight[i];
        if constexpr (with_bias) value += bias[i];
        y[i] = static_cast<C>(value);
      }
    });
  };
  using Yes = std::true_type;
  using No = std::false_type;
  if (weight && bias) {
    normalize(Yes{}, Yes{});
  } else if (weight) {
    normalize(Yes{}, No{});
  } else if (bias) {
    normalize(No{}, Yes{});
  } else {
    normalize(No{}, No{});
  }
}

}  // namespace bp::cpu
