// softmax, log_softmax and layer norm: kernels that normalise groups of elements.
#include "CPUNativeFunctions.h"

#include "dtypes.h"
#include "multiversion.h"
#include "reduction.h"
#include "strided_loop.h"
#include "vector_math.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace bp::cpu {
namespace {

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
// better: softmax over the columns of a 4096 x 4096 float32 matrix took 66.9, 25.5, 17.8 and
// 11.7 ms with tiles of 16, 64, 256 and 1024 groups (11.2 ms with 4096).
constexpr int64_t kSideBySideTile = 1024;

// Walks `count` groups lying side by side (group j's elements at `first` + j * `step` in
// operands 0, the input, and 1, the output) a tile of kSideBySideTile groups at a time: calls
// tile_fn(tile_first, width, for_each_row, in_step, out_step) for each tile of `width` groups,
// where for_each_row(fn) calls fn(in_at, out_at, position) for each member position of the
// tile's groups, with the offsets of the tile's first group's elements there; group j's are
// j * in_step and j * out_step further. Both steps are compile-time 1 when the groups are
// adjacent in both operands, so that the kernels' loops over j vectorise.
template <size_t N, typename TileFn>
void for_each_side_by_side_tile(const ReductionLoops<N>& loops, const Offsets<N>& first,
                                const Offsets<N>& step, int64_t count, TileFn&& tile_fn) {
  const auto walk = [&](auto in_step, auto out_step) {
    for (int64_t tile = 0; tile < count; tile += kSideBySideTile) {
      const int64_t width = std::min(kSideBySideTile, count - tile);
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
// output passes write kScatteredGroups groups at a time, whose lines stay cached: layer norm of
// a transposed 4096 x 4096 float32 matrix took 29.2, 25.9, 26.2 and 29.5 ms with 16, 32, 64 and
// 128 groups at a time, and 67.7 ms with the whole tile.
constexpr int64_t kScatteredGroups = 64;

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
  C max[kSideBySideTile];
  double sums[kSideBySideTile];
  C factor[kSideBySideTile];  // 1 / sum, or for log_softmax log(sum)
  C row[kSideBySideTile];     // a row of the input in C, where it is not C already
  C results[kSideBySideTile];
  for_each_side_by_side_tile(loops, first, step, count, [&](const Offsets<2>&, int64_t width,
                                                            const auto& for_each_row,
                                                            auto in_step, auto out_step) {
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
  double mean[kSideBySideTile];
  double rstd[kSideBySideTile];
  double first_row[kSideBySideTile];
  C row[kSideBySideTile];  // a row of the input in C, where it is not C already
  C results[kSideBySideTile];
  for_each_side_by_side_tile(loops, first, step, count, [&](const Offsets<N>& tile_first,
                                                            int64_t width,
                                                            const auto& for_each_row,
                                                            auto in_step, auto out_step) {
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

// softmax or log_softmax along `dim`, computed in the compute type of out's dtype, which the
// meta step has given self too.
void softmax_into(std::string_view op, const TensorView& self, int64_t dim, const TensorView& out,
                  bool log) {
  require_dtype(op, "self", self, out.dtype());
  const ReductionLoops<2> loops(self.sizes(), {self.strides(), out.strides()},
                                single_reduced_dim(op, self.dim(), dim));
  visit_supported<FloatingDType>(op, out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    if (loops.groups_side_by_side()) {
      loops.for_each_group_run<NoScratch>(
          [&](const Offsets<2>& first, const Offsets<2>& step, int64_t count, NoScratch&) {
            softmax_side_by_side(loops, first, step, count, self.data<const T>(), out.data<T>(),
                                 log);
          });
      return;
    }
    for_each_group_span(loops, self.data<const T>(), out.data<T>(),
                        [&](const Offsets<2>&, const C* x, C* y, int64_t n,
                            const NextRows<C>& next) { softmax_span(x, y, n, log, next); });
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

// A parameter that is the same for every group (the weight or bias of layer norm and rms
// norm), as one contiguous array of doubles, converted once per call rather than once per
// group; empty when the parameter is absent.
template <typename T, size_t N>
std::vector<double> per_group_parameter(const ReductionLoops<N>& loops, size_t k,
                                        const TensorView* parameter) {
  std::vector<double> values;
  if (parameter == nullptr) return values;
  values.resize(static_cast<size_t>(loops.group_size()));
  gather_group(loops, Offsets<N>{}, k, parameter->data<const T>(), values.data());
  return values;
}

// The parameter's first element, or null for an absent one.
inline const double* data_or_null(const std::vector<double>& values) {
  return values.empty() ? nullptr : values.data();
}

}  // namespace

void softmax_int_out(const TensorView& self, int64_t dim,
                     std::optional<bp::DType> /*dtype: out has it*/, const TensorView& out) {
  softmax_into("softmax", self, dim, out, /*log=*/false);
}

void log_softmax_int_out(const TensorView& self, int64_t dim,
                         std::optional<bp::DType> /*dtype: out has it*/, const TensorView& out) {
  softmax_into("log_softmax", self, dim, out, /*log=*/true);
}

namespace {

// Strides that read an optional weight or bias over the input's shape; an absent one is never
// read, and zero strides stand in for it.
DimValues<int64_t> parameter_strides(std::string_view op, std::string_view name,
                                     const TensorView* parameter, const TensorView& input) {
  if (parameter == nullptr) return DimValues<int64_t>(static_cast<size_t>(input.dim()), 0);
  require_dtype(op, name, *parameter, input.dtype());
  return broadcast_strides(op, *parameter, input.sizes());
}

}  // namespace

// Layer norm and RMS norm: each group is one index of the leading dimensions; its elements
// span the trailing `normalized_shape`, which the meta step has checked against the input's
// shape.
void native_layer_norm_out(const TensorView& input, std::span<const int64_t> normalized_shape,
                           const TensorView* weight, const TensorView* bias, double eps,
                           const TensorView& out0, const TensorView& out1, const TensorView& out2) {
  constexpr std::string_view op = "native_layer_norm";
  for (const TensorView* output : {&out0, &out1, &out2})
    require_dtype(op, "outputs", *output, input.dtype());
  const DimValues<bool> normalized = trailing_dims(op, input.dim(), normalized_shape);
  const DimValues<int64_t> mean_strides =
      reduced_output_strides(out1, normalized, /*keepdim=*/true);
  const DimValues<int64_t> rstd_strides =
      reduced_output_strides(out2, normalized, /*keepdim=*/true);
  const DimValues<int64_t> weight_strides = parameter_strides(op, "weight", weight, input);
  const DimValues<int64_t> bias_strides = parameter_strides(op, "bias", bias, input);
  enum LayerNormOperand { kInput, kOut, kMean, kRstd, kWeight, kBias, kOperands };
  const ReductionLoops<kOperands> loops(
      input.sizes(),
      {input.strides(), out0.strides(), mean_strides.span(), rstd_strides.span(),
       weight_strides.span(), bias_strides.span()},
      normalized);

  visit_supported<FloatingDType>(op, input.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    const std::vector<double> weights = per_group_parameter<T>(loops, kWeight, weight);
    const std::vector<double> biases = per_group_parameter<T>(loops, kBias, bias);
    const double* w = data_or_null(weights);
    const double* b = data_or_null(biases);
    T* mean = out1.data<T>();
    T* rstd = out2.data<T>();
    if (loops.groups_side_by_side()) {
      loops.template for_each_group_run<NoScratch>([&](const Offsets<kOperands>& first,
                                                       const Offsets<kOperands>& step,
                                                       int64_t count, NoScratch&) {
        normalize_side_by_side(
            loops, first, step, count, input.data<const T>(), out0.data<T>(), /*rms=*/false, eps,
            w, b, [&](const Offsets<kOperands>& tile_first, int64_t j, double m, double r) {
              mean[tile_first[kMean] + j * step[kMean]] = static_cast<T>(m);
              rstd[tile_first[kRstd] + j * step[kRstd]] = static_cast<T>(r);
            });
      });
      return;
    }
    for_each_group_span(loops, input.data<const T>(), out0.data<T>(),
                        [&](const Offsets<kOperands>& group, const C* x, C* y, int64_t n,
                            const NextRows<C>& next) {
                          const Moments moments = moments_of(x, n, eps);
                          normalize_span(x, y, n, moments, w, b, next);
                          mean[group[kMean]] = static_cast<T>(moments.mean);
                          rstd[group[kRstd]] = static_cast<T>(moments.rstd);
                        });
  });
}

// y = x / sqrt(mean(x^2) + eps) * weight over each group, the mean of squares in double. eps
// absent is the machine epsilon of the compute type, as PyTorch's default.
void rms_norm_out(const TensorView& input, std::span<const int64_t> normalized_shape,
                  const TensorView* weight, std::optional<double> eps, const TensorView& out) {
  constexpr std::string_view op = "rms_norm";
  require_dtype(op, "out", out, input.dtype());
  const DimValues<bool> normalized = trailing_dims(op, input.dim(), normalized_shape);
  const DimValues<int64_t> weight_strides = parameter_strides(op, "weight", weight, input);
  enum RmsNormOperand { kInput, kOut, kWeight, kOperands };
  const ReductionLoops<kOperands> loops(
      input.sizes(), {input.strides(), out.strides(), weight_strides.span()}, normalized);

  visit_supported<FloatingDType>(op, input.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    const double epsilon = eps.value_or(std::numeric_limits<C>::epsilon());
    const std::vector<double> weights = per_group_parameter<T>(loops, kWeight, weight);
    const double* w = data_or_null(weights);
    if (loops.groups_side_by_side()) {
      loops.template for_each_group_run<NoScratch>([&](const Offsets<kOperands>& first,
                                                       const Offsets<kOperands>& step,
                                                       int64_t count, NoScratch&) {
        normalize_side_by_side(loops, first, step, count, input.data<const T>(), out.data<T>(),
                               /*rms=*/true, epsilon, w, nullptr,
                               [](const Offsets<kOperands>&, int64_t, double, double) {});
      });
      return;
    }
    for_each_group_span(loops, input.data<const T>(), out.data<T>(),
                        [&](const Offsets<kOperands>&, const C* x, C* y, int64_t n,
                            const NextRows<C>& next) {
                          const Moments moments{0, reciprocal_root_mean_square(x, n, epsilon)};
                          normalize_span(x, y, n, moments, w, nullptr, next);
                        });
  });
}

}  // namespace bp::cpu
