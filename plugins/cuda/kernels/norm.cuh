// Layer norm and RMS norm, and layer norm's gradients (at the end). A team reads each group once
// for its statistics, keeping it in shared memory (in the compute type) when it fits, so that
// later passes read it from there rather than from device memory again; groups that do not fit
// are read again for each pass. Both accumulate in float (double for Double).
//
// Launched by norm.cu; a header so that the host tests compile these kernels too
// (tests/cuda/emulated_launch.h).
#pragma once

#include "kernels/groups.cuh"
#include "kernels/register_rows.cuh"

#include <functional>
#include <limits>

namespace bp::cuda {
// Internal to each includer: the kernel library and the host tests each compile their own.
namespace {

// Mean and variance are taken in two passes: the sum of deviations from the group's first member
// gives the mean (that member exactly, for a constant group, however large), then the sum of
// squared deviations from the mean gives the variance (exactly 0 for a constant group). No
// division per member, and no cancellation between large sums.
template <typename T>
__global__ void __launch_bounds__(kMaxTeamThreads)
    layer_norm_rows(GroupShape<kNormOperands> shape, const T* __restrict__ input,
                    T* __restrict__ out, T* __restrict__ mean_out, T* __restrict__ rstd_out,
                    const T* __restrict__ weight, const T* __restrict__ bias, compute_t<T> eps,
                    bool cached) {
  using Acc = compute_t<T>;
  __shared__ Acc warp_partials[kMaxTeamThreads / kWarpSize];
  Acc* cache_row = slot_row_cache<Acc>(shape);
  const int lane = static_cast<int>(threadIdx.x);
  const int team = static_cast<int>(blockDim.x);
  const int64_t size = shape.group_size;
  for_each_slot_group(shape, [&](int64_t /*group*/, bool active,
                                 const int64_t(&at)[kNormOperands]) {
    const T* in = input + at[kNormInput];
    const unsigned walked = 1u << kNormInput | 1u << kNormOut | (weight ? 1u << kNormWeight : 0u) |
                            (bias ? 1u << kNormBias : 0u);
    MemberSpans<kVectorWidth<T>> spans{};
    if (active) spans = member_spans(in, shape, 0, size, walked);
    const auto source = group_operand(in, shape, kNormInput, spans);
    const auto cache = cached_group(cache_row, shape, spans);
    const auto destination = group_operand(out + at[kNormOut], shape, kNormOut, spans);
    const auto weights =
        group_operand(weight ? weight + at[kNormWeight] : weight, shape, kNormWeight, spans);
    const auto biases = group_operand(bias ? bias + at[kNormBias] : bias, shape, kNormBias, spans);
    const auto read = [&](auto width, int64_t p) { return to_compute(source.load(width, p)); };
    const auto members = [&](auto width, int64_t p) {
      return cached ? cache.load(width, p) : read(width, p);
    };

    const Acc shift = active && size > 0 ? to_compute(in[0]) : Acc(0);
    Acc deviations = 0;
    for_spans(spans, lane, team, read, [&](const auto& x, int64_t p) {
      if (cached) cache.store(p, x);
      for (const Acc value : x.v) deviations += value - shift;
    });
    // Over no members, mean and variance are 0 / 0 = NaN, as in PyTorch.
    const Acc mean =
        shift + team_reduce(deviations, Plus{}, warp_partials) / static_cast<Acc>(size);
    Acc squares = 0;
    for_spans(spans, lane, team, members, [&](const auto& x, int64_t) {
      for (const Acc value : x.v) squares += (value - mean) * (value - mean);
    });
    const Acc variance = team_reduce(squares, Plus{}, warp_partials) / static_cast<Acc>(size);
    const Acc rstd = Acc(1) / math_sqrt(variance + eps);
    for_spans(spans, lane, team, members, [&](const auto& x, int64_t p) {
      auto y = each(x, [&](Acc value) { return (value - mean) * rstd; });
      if (weight) y = each(y, to_compute(weights.load(width_of(y), p)), std::multiplies{});
      if (bias) y = each(y, to_compute(biases.load(width_of(y), p)), Plus{});
      destination.store(p, from_compute<T>(y));
    });
    if (active && lane == 0) {
      mean_out[at[kNormMean]] = from_compute<T>(mean);
      rstd_out[at[kNormRstd]] = from_compute<T>(rstd);
    }
    // The next group's spans may fall differently: every thread finishes reading its members first.
    if (cached) __syncthreads();
  });
}

template <typename T>
__global__ void __launch_bounds__(kMaxTeamThreads)
    rms_norm_rows(GroupShape<3> shape, const T* __restrict__ input, T* __restrict__ out,
                  const T* __restrict__ weight, compute_t<T> eps, bool cached) {
  using Acc = compute_t<T>;
  __shared__ Acc warp_partials[kMaxTeamThreads / kWarpSize];
  Acc* cache_row = slot_row_cache<Acc>(shape);
  const int lane = static_cast<int>(threadIdx.x);
  const int team = static_cast<int>(blockDim.x);
  const int64_t size = shape.group_size;
  for_each_slot_group(shape, [&](int64_t /*group*/, bool active, const int64_t(&at)[3]) {
    const T* in = input + at[0];
    MemberSpans<kVectorWidth<T>> spans{};
    if (active)
      spans = member_spans(in, shape, 0, size, 1u << 0 | 1u << 1 | (weight ? 1u << 2 : 0u));
    const auto source = group_operand(in, shape, 0, spans);
    const auto cache = cached_group(cache_row, shape, spans);
    const auto destination = group_operand(out + at[1], shape, 1, spans);
    const auto weights = group_operand(weight ? weight + at[2] : weight, shape, 2, spans);
    const auto read = [&](auto width, int64_t p) { return to_compute(source.load(width, p)); };

    Acc squares = 0;
    for_spans(spans, lane, team, read, [&](const auto& x, int64_t p) {
      if (cached) cache.store(p, x);
      for (const Acc value : x.v) squares += value * value;
    });
    squares = team_reduce(squares, Plus{}, warp_partials);
    const Acc factor = Acc(1) / math_sqrt(squares / static_cast<Acc>(size) + eps);
    for_spans(
        spans, lane, team,
        [&](auto width, int64_t p) { return cached ? cache.load(width, p) : read(width, p); },
        [&](const auto& x, int64_t p) {
          auto y = each(x, [&](Acc value) { return value * factor; });
          if (weight) y = each(y, to_compute(weights.load(width_of(y), p)), std::multiplies{});
          destination.store(p, from_compute<T>(y));
        });
    // The next group's spans may fall differently: every thread finishes reading its members first.
    if (cached) __syncthreads();
  });
}

// Rows held in registers (register_rows.cuh), with layer_norm_rows' arithmetic: the mean from
// deviations from the row's first member, the variance from squared deviations from the mean.
// Weight and bias are read at the write, from the cache: every row reads the same members.
template <typename T, int kTeam, int kVectors>
__global__ void __launch_bounds__(kRegisterRowBlock<kTeam>) layer_norm_register_rows(
    GroupShape<kNormOperands> shape, const T* __restrict__ input, T* __restrict__ out,
    T* __restrict__ mean_out, T* __restrict__ rstd_out, const T* __restrict__ weight,
    const T* __restrict__ bias, compute_t<T> eps) {
  using Acc = compute_t<T>;
  __shared__ Acc exchange[2][TeamReducer<kTeam, Acc>::kWarps];
  TeamReducer<kTeam, Acc> reduce{exchange};
  const auto size = static_cast<Acc>(shape.group_size);
  for_each_register_row<kTeam, kVectors>(
      shape, input, [&](const int64_t(&at)[kNormOperands], auto& row) {
        const Acc shift = to_compute(input[at[kNormInput]]);
        const Acc mean =
            shift +
            reduce(row.fold(Acc(0), Plus{}, [&](Acc value) { return value - shift; }), Plus{}) /
                size;
        const Acc variance =
            reduce(row.fold(Acc(0), Plus{},
                            [&](Acc value) { return (value - mean) * (value - mean); }),
                   Plus{}) /
            size;
        const Acc rstd = Acc(1) / math_sqrt(variance + eps);
#pragma unroll
        for (int i = 0; i < kVectors; ++i) {
          if (!row.holds(i)) continue;
          auto y = each(row.x[i], [&](Acc value) { return (value - mean) * rstd; });
          if (weight) {
            y = each(y, to_compute(load_vector(weight + at[kNormWeight] + row.at(i))),
                     std::multiplies{});
          }
          if (bias) y = each(y, to_compute(load_vector(bias + at[kNormBias] + row.at(i))), Plus{});
          store_vector<T>(out + at[kNormOut] + row.at(i), y);
        }
        if (row.lane == 0) {
          mean_out[at[kNormMean]] = from_compute<T>(mean);
          rstd_out[at[kNormRstd]] = from_compute<T>(rstd);
        }
      });
}

template <typename T, int kTeam, int kVectors>
__global__ void __launch_bounds__(kRegisterRowBlock<kTeam>) rms_norm_register_rows(
    GroupShape<3> shape, const T* __restrict__ input, T* __restrict__ out,
    const T* __restrict__ weight, compute_t<T> eps) {
  using Acc = compute_t<T>;
  __shared__ Acc exchange[2][TeamReducer<kTeam, Acc>::kWarps];
  TeamReducer<kTeam, Acc> reduce{exchange};
  const auto size = static_cast<Acc>(shape.group_size);
  for_each_register_row<kTeam, kVectors>(shape, input, [&](const int64_t(&at)[3], auto& row) {
    const Acc squares =
        reduce(row.fold(Acc(0), Plus{}, [](Acc value) { return value * value; }), Plus{});
    const Acc factor = Acc(1) / math_sqrt(squares / size + eps);
#pragma unroll
    for (int i = 0; i < kVectors; ++i) {
      if (!row.holds(i)) continue;
      auto y = each(row.x[i], [&](Acc value) { return value * factor; });
      if (weight)
        y = each(y, to_compute(load_vector(weight + at[2] + row.at(i))), std::multiplies{});
      store_vector<T>(out + at[1] + row.at(i), y);
    }
  });
}

// Layer norm's gradient of input, one team per group: with x^ = (x - mean) * rstd and
// h = g * weight (g where there is no weight), g_in = rstd (h - mean(h) - x^ mean(h x^)).
template <typename T>
__global__ void __launch_bounds__(kMaxTeamThreads)
    layer_norm_input_gradient(GroupShape<kLayerNormGradOperands> shape,
                              const T* __restrict__ grad_out, const T* __restrict__ input,
                              T* __restrict__ grad_input, const T* __restrict__ mean_of,
                              const T* __restrict__ rstd_of, const T* __restrict__ weight) {
  using Acc = compute_t<T>;
  __shared__ Acc warp_partials[kMaxTeamThreads / kWarpSize];
  const int lane = static_cast<int>(threadIdx.x);
  const int team = static_cast<int>(blockDim.x);
  const int64_t size = shape.group_size;
  for_each_slot_group(
      shape, [&](int64_t /*group*/, bool active, const int64_t(&at)[kLayerNormGradOperands]) {
        const int64_t members = active ? size : 0;
        const Acc mean = active ? to_compute(mean_of[at[kLayerNormGradMean]]) : Acc(0);
        const Acc rstd = active ? to_compute(rstd_of[at[kLayerNormGradRstd]]) : Acc(0);
        const auto at_member = [&](int k, int64_t p) { return at[k] + member_offset(shape, k, p); };
        const auto h_at = [&](int64_t p) {
          const Acc g = to_compute(grad_out[at_member(kLayerNormGradOut, p)]);
          return weight ? g * to_compute(weight[at_member(kLayerNormGradWeight, p)]) : g;
        };
        const auto normalized_at = [&](int64_t p) {
          return (to_compute(input[at_member(kLayerNormGradInput, p)]) - mean) * rstd;
        };
        Acc h_sum = 0, hx_sum = 0;
        for (int64_t p = lane; p < members; p += team) {
          const Acc h = h_at(p);
          h_sum += h;
          hx_sum += h * normalized_at(p);
        }
        const Acc h_mean = team_reduce(h_sum, Plus{}, warp_partials) / static_cast<Acc>(size);
        const Acc hx_mean = team_reduce(hx_sum, Plus{}, warp_partials) / static_cast<Acc>(size);
        for (int64_t p = lane; p < members; p += team) {
          grad_input[at_member(kLayerNormGradResult, p)] =
              from_compute<T>(rstd * (h_at(p) - h_mean - normalized_at(p) * hx_mean));
        }
      });
}

// Threads of a block of layer_norm_parameter_sums, each one member.
constexpr int kParameterSumThreads = 256;

// The first stage of the gradients of layer norm's weight and bias: block (x, y) sums, for
// kParameterSumThreads members each, the groups of split y (`chunk` groups from y * chunk, fewer
// or none past the last group):
// weight_partials[y * size + p] = the sum of g x^, bias_partials[...] = the sum of g, in group
// order.
template <typename T>
__global__ void __launch_bounds__(kParameterSumThreads)
    layer_norm_parameter_sums(GroupShape<kLayerNormGradOperands> shape,
                              const T* __restrict__ grad_out, const T* __restrict__ input,
                              const T* __restrict__ mean_of, const T* __restrict__ rstd_of,
                              int64_t splits, int64_t chunk,
                              compute_t<T>* __restrict__ weight_partials,
                              compute_t<T>* __restrict__ bias_partials) {
  using Acc = compute_t<T>;
  const int64_t size = shape.group_size;
  for (int64_t split = blockIdx.y; split < splits; split += gridDim.y) {
    const int64_t first = split * chunk < shape.groups ? split * chunk : shape.groups;
    const int64_t last = first + chunk < shape.groups ? first + chunk : shape.groups;
    for (int64_t p = global_thread(); p < size; p += grid_threads()) {
      Acc gx_sum = 0, g_sum = 0;
      for (int64_t group = first; group < last; ++group) {
        int64_t at[kLayerNormGradOperands];
        shape.kept.offsets(group, at);
        const Acc g = to_compute(
            grad_out[at[kLayerNormGradOut] + member_offset(shape, kLayerNormGradOut, p)]);
        const Acc x = to_compute(
            input[at[kLayerNormGradInput] + member_offset(shape, kLayerNormGradInput, p)]);
        const Acc normalized = (x - to_compute(mean_of[at[kLayerNormGradMean]])) *
                               to_compute(rstd_of[at[kLayerNormGradRstd]]);
        gx_sum += g * normalized;
        g_sum += g;
      }
      weight_partials[split * size + p] = gx_sum;
      bias_partials[split * size + p] = g_sum;
    }
  }
}

// The second stage: member p of the (dense) gradients is the sum of its `splits` partials, in
// split order.
template <typename T>
__global__ void __launch_bounds__(kParameterSumThreads)
    layer_norm_parameter_totals(int64_t size, int64_t splits,
                                const compute_t<T>* __restrict__ weight_partials,
                                const compute_t<T>* __restrict__ bias_partials,
                                T* __restrict__ grad_weight, T* __restrict__ grad_bias) {
  using Acc = compute_t<T>;
  for (int64_t p = global_thread(); p < size; p += grid_threads()) {
    Acc gx_sum = 0, g_sum = 0;
    for (int64_t split = 0; split < splits; ++split) {
      gx_sum += weight_partials[split * size + p];
      g_sum += bias_partials[split * size + p];
    }
    grad_weight[p] = from_compute<T>(gx_sum);
    grad_bias[p] = from_compute<T>(g_sum);
  }
}

}  // namespace
}  // namespace bp::cuda
