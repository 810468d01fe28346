// Normalisations. Layer norm and RMS norm take each group's statistics in one read of the input
// (for layer norm, Welford's update per member, merged across a team), the group kept in shared
// memory when it fits so that normalising reads it from there rather than from device memory
// again. Batch norm (inference) is elementwise over per-channel statistics. All accumulate in
// float (double for Double).
#include "elementwise.cuh"
#include "groups.cuh"

#include <limits>

namespace bp::cuda {
namespace {

template <typename Acc>
struct Moments {
  Acc count;
  Acc mean;
  Acc m2;  // the sum of squared deviations from the mean
};

template <typename Acc>
__device__ __forceinline__ Moments<Acc> with_member(Moments<Acc> m, Acc x) {
  m.count += Acc(1);
  const Acc delta = x - m.mean;
  m.mean += delta / m.count;
  m.m2 += delta * (x - m.mean);
  return m;
}

template <typename Acc>
struct MergeMoments {
  __device__ Moments<Acc> operator()(const Moments<Acc>& a, const Moments<Acc>& b) const {
    if (b.count == Acc(0)) return a;
    if (a.count == Acc(0)) return b;
    const Acc count = a.count + b.count;
    const Acc share = b.count / count;
    const Acc delta = b.mean - a.mean;
    return {count, a.mean + delta * share, a.m2 + b.m2 + delta * delta * a.count * share};
  }
};

template <typename T>
__global__ void __launch_bounds__(kMaxTeamThreads) layer_norm_rows(GroupShape<kNormOperands> shape, const T* __restrict__ input, T* __restrict__ out,
                                T* __restrict__ mean_out, T* __restrict__ rstd_out, const T* __restrict__ weight,
                                const T* __restrict__ bias, compute_t<T> eps, bool cached) {
  using Acc = compute_t<T>;
  __shared__ Moments<Acc> warp_partials[kMaxTeamThreads / kWarpSize];
  T* cache = slot_row_cache<T>(shape);
  const int lane = static_cast<int>(threadIdx.x);
  const int team = static_cast<int>(blockDim.x);
  const int64_t size = shape.group_size;
  for_each_slot_group(shape, [&](int64_t /*group*/, bool active, const int64_t (&at)[kNormOperands]) {
    const T* in = input + at[kNormInput];
    Moments<Acc> moments{Acc(0), Acc(0), Acc(0)};
    if (active) {
      for_members(in, shape, 0, size, lane, team, [&](T x, int64_t p) {
        if (cached) cache[p] = x;
        moments = with_member(moments, to_compute(x));
      });
    }
    moments = team_reduce(moments, MergeMoments<Acc>{}, warp_partials);
    if (cached) __syncthreads();  // the whole group is in the cache
    // Over no members, mean and variance are 0 / 0 = NaN, as in PyTorch.
    const Acc mean = size > 0 ? moments.mean : std::numeric_limits<Acc>::quiet_NaN();
    const Acc variance = size > 0 ? moments.m2 / moments.count : std::numeric_limits<Acc>::quiet_NaN();
    const Acc rstd = Acc(1) / math_sqrt(variance + eps);
    for (int64_t p = lane; active && p < size; p += team) {
      const T x = cached ? cache[p] : in[member_offset(shape, kNormInput, p)];
      Acc y = (to_compute(x) - mean) * rstd;
      if (weight) y *= to_compute(weight[at[kNormWeight] + member_offset(shape, kNormWeight, p)]);
      if (bias) y += to_compute(bias[at[kNormBias] + member_offset(shape, kNormBias, p)]);
      out[at[kNormOut] + member_offset(shape, kNormOut, p)] = from_compute<T>(y);
    }
    if (active && lane == 0) {
      mean_out[at[kNormMean]] = from_compute<T>(mean);
      rstd_out[at[kNormRstd]] = from_compute<T>(rstd);
    }
    if (cached) __syncthreads();  // before the cache is filled again
  });
}

template <typename T>
__global__ void __launch_bounds__(kMaxTeamThreads)
    rms_norm_rows(GroupShape<3> shape, const T* __restrict__ input, T* __restrict__ out,
                  const T* __restrict__ weight, compute_t<T> eps, bool cached) {
  using Acc = compute_t<T>;
  __shared__ Acc warp_partials[kMaxTeamThreads / kWarpSize];
  T* cache = slot_row_cache<T>(shape);
  const int lane = static_cast<int>(threadIdx.x);
  const int team = static_cast<int>(blockDim.x);
  const int64_t size = shape.group_size;
  for_each_slot_group(shape, [&](int64_t /*group*/, bool active, const int64_t (&at)[3]) {
    const T* in = input + at[0];
    Acc squares = 0;
    if (active) {
      for_members(in, shape, 0, size, lane, team, [&](T x, int64_t p) {
        if (cached) cache[p] = x;
        const Acc value = to_compute(x);
        squares += value * value;
      });
    }
    squares = team_reduce(squares, Plus{}, warp_partials);
    if (cached) __syncthreads();  // the whole group is in the cache
    const Acc factor = Acc(1) / math_sqrt(squares / static_cast<Acc>(size) + eps);
    for (int64_t p = lane; active && p < size; p += team) {
      const T x = cached ? cache[p] : in[member_offset(shape, 0, p)];
      Acc y = to_compute(x) * factor;
      if (weight) y *= to_compute(weight[at[2] + member_offset(shape, 2, p)]);
      out[at[1] + member_offset(shape, 1, p)] = from_compute<T>(y);
    }
    if (cached) __syncthreads();  // before the cache is filled again
  });
}

// out = (x - mean) * weight / sqrt(var + eps) + bias, in the compute type, as the CPU backend.
template <typename C>
struct BatchNorm {
  C eps;
  bool has_weight;
  bool has_bias;
  __device__ C operator()(C x, C mean, C var, C weight, C bias) const {
    C factor = C(1) / math_sqrt(var + eps);
    if (has_weight) factor *= weight;
    return (x - mean) * factor + (has_bias ? bias : C(0));
  }
};

// Each thread of a team handles about this many members.
constexpr int64_t kNormMembersPerThread = 16;

}  // namespace

void launch_layer_norm(DType dtype, const GroupShape<kNormOperands>& shape, const void* const* data, double eps,
                       const LaunchTarget& target) {
  if (shape.groups == 0) return;
  dispatch_dtype<FloatingDType>("native_layer_norm", dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    auto operand = [&](int k) { return static_cast<T*>(const_cast<void*>(data[k])); };
    const CachedRowLayout layout =
        prepare_cached_rows(reinterpret_cast<const void*>(&layer_norm_rows<T>), "layer_norm", shape.groups,
                            shape.group_size, sizeof(T), kNormMembersPerThread, target);
    layer_norm_rows<<<layout.rows.blocks, dim3(layout.rows.team, layout.rows.slots), layout.shared_bytes,
                      target.stream>>>(shape, operand(kNormInput), operand(kNormOut), operand(kNormMean),
                                       operand(kNormRstd), operand(kNormWeight), operand(kNormBias),
                                       static_cast<compute_t<T>>(eps), layout.cached);
    check_launch("layer_norm");
  });
}

void launch_rms_norm(DType dtype, const GroupShape<3>& shape, const void* input, void* out, const void* weight,
                     std::optional<double> eps, const LaunchTarget& target) {
  if (shape.groups == 0 || shape.group_size == 0) return;
  dispatch_dtype<FloatingDType>("rms_norm", dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    const C epsilon = eps ? static_cast<C>(*eps) : std::numeric_limits<C>::epsilon();
    const CachedRowLayout layout =
        prepare_cached_rows(reinterpret_cast<const void*>(&rms_norm_rows<T>), "rms_norm", shape.groups,
                            shape.group_size, sizeof(T), kNormMembersPerThread, target);
    rms_norm_rows<<<layout.rows.blocks, dim3(layout.rows.team, layout.rows.slots), layout.shared_bytes,
                    target.stream>>>(shape, static_cast<const T*>(input), static_cast<T*>(out),
                                     static_cast<const T*>(weight), epsilon, layout.cached);
    check_launch("rms_norm");
  });
}

void launch_batch_norm(DType dtype, const ElementwiseLaunch<6>& launch, double eps, bool has_weight, bool has_bias) {
  dispatch_dtype<FloatingDType>("batch_norm", dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    launch_elementwise<T, T, T, T, T, T>(launch, BatchNorm<C>{static_cast<C>(eps), has_weight, has_bias});
  });
}

}  // namespace bp::cuda
