// Normalisations: the launches of layer norm, its gradients, and RMS norm (kernels in norm.cuh),
// and batch norm (inference), elementwise over per-channel statistics in float (double for
// Double).
#include "kernels/elementwise_launch.cuh"
#include "kernels/norm.cuh"

#include <algorithm>
#include <limits>

namespace bp::cuda {
namespace {

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

}  // namespace

void launch_layer_norm(DType dtype, const GroupShape<kNormOperands>& shape, const void* const* data,
                       double eps, const LaunchTarget& target) {
  if (shape.groups == 0) return;
  plugin::visit_dtype<kernel_dtypes::native_layer_norm_out>(dtype, [&](auto tag) {
    using T = device_t<typename decltype(tag)::type>;
    auto operand = [&](int k) { return static_cast<T*>(const_cast<void*>(data[k])); };
    const void* const firsts[kNormOperands] = {data[0], data[1], data[2],
                                               data[3], data[4], data[5]};
    const unsigned walked = 1u << kNormInput | 1u << kNormOut |
                            (data[kNormWeight] ? 1u << kNormWeight : 0u) |
                            (data[kNormBias] ? 1u << kNormBias : 0u);
    if (rows_in_registers<T>(shape, firsts, walked)) {
      launch_register_rows<T>(shape, target, [&](auto team, auto vectors, dim3 grid, dim3 block) {
        layer_norm_register_rows<T, decltype(team)::value, decltype(vectors)::value>
            <<<grid, block, 0, target.stream>>>(shape, operand(kNormInput), operand(kNormOut),
                                                operand(kNormMean), operand(kNormRstd),
                                                operand(kNormWeight), operand(kNormBias),
                                                static_cast<compute_t<T>>(eps));
      });
      check_launch("layer_norm");
      return;
    }
    const CachedRowLayout layout =
        prepare_cached_rows(reinterpret_cast<const void*>(&layer_norm_rows<T>), "layer_norm",
                            shape.groups, shape.group_size, sizeof(compute_t<T>),
                            members_per_thread(kRowBytesPerThread, sizeof(T)), target);
    layer_norm_rows<<<layout.rows.blocks, dim3(layout.rows.team, layout.rows.slots),
                      layout.shared_bytes, target.stream>>>(
        shape, operand(kNormInput), operand(kNormOut), operand(kNormMean), operand(kNormRstd),
        operand(kNormWeight), operand(kNormBias), static_cast<compute_t<T>>(eps), layout.cached);
    check_launch("layer_norm");
  });
}

void launch_rms_norm(DType dtype, const GroupShape<3>& shape, const void* input, void* out,
                     const void* weight, std::optional<double> eps, const LaunchTarget& target) {
  if (shape.groups == 0 || shape.group_size == 0) return;
  plugin::visit_dtype<kernel_dtypes::rms_norm_out>(dtype, [&](auto tag) {
    using T = device_t<typename decltype(tag)::type>;
    using C = compute_t<T>;
    const C epsilon = eps ? static_cast<C>(*eps) : std::numeric_limits<C>::epsilon();
    const void* const firsts[3] = {input, out, weight};
    if (rows_in_registers<T>(shape, firsts, 1u << 0 | 1u << 1 | (weight ? 1u << 2 : 0u))) {
      launch_register_rows<T>(shape, target, [&](auto team, auto vectors, dim3 grid, dim3 block) {
        rms_norm_register_rows<T, decltype(team)::value, decltype(vectors)::value>
            <<<grid, block, 0, target.stream>>>(shape, static_cast<const T*>(input),
                                                static_cast<T*>(out), static_cast<const T*>(weight),
                                                epsilon);
      });
      check_launch("rms_norm");
      return;
    }
    const CachedRowLayout layout =
        prepare_cached_rows(reinterpret_cast<const void*>(&rms_norm_rows<T>), "rms_norm",
                            shape.groups, shape.group_size, sizeof(compute_t<T>),
                            members_per_thread(kRowBytesPerThread, sizeof(T)), target);
    rms_norm_rows<<<layout.rows.blocks, dim3(layout.rows.team, layout.rows.slots),
                    layout.shared_bytes, target.stream>>>(
        shape, static_cast<const T*>(input), static_cast<T*>(out), static_cast<const T*>(weight),
        epsilon, layout.cached);
    check_launch("rms_norm");
  });
}

void launch_layer_norm_backward(DType dtype, const GroupShape<kLayerNormGradOperands>& shape,
                                const void* const* data, const LaunchTarget& target,
                                GroupScratch& scratch, void* grad_weight, void* grad_bias) {
  plugin::visit_dtype<kernel_dtypes::native_layer_norm_backward_out>(dtype, [&](auto tag) {
    using T = device_t<typename decltype(tag)::type>;
    using Acc = compute_t<T>;
    auto operand = [&](int k) { return static_cast<T*>(const_cast<void*>(data[k])); };
    const int64_t size = shape.group_size;
    if (shape.groups > 0 && size > 0) {
      const RowLayout layout =
          row_layout(shape.groups, size, members_per_thread(kRowBytesPerThread, sizeof(T)),
                     kMaxTeamThreads, /*allow_splits=*/false, target);
      layer_norm_input_gradient<T>
          <<<layout.blocks, dim3(layout.team, layout.slots), 0, target.stream>>>(
              shape, operand(kLayerNormGradOut), operand(kLayerNormGradInput),
              operand(kLayerNormGradResult), operand(kLayerNormGradMean),
              operand(kLayerNormGradRstd), operand(kLayerNormGradWeight));
      check_launch("layer_norm_input_gradient");
    }
    if (size == 0) return;
    // Enough splits of the groups that the first stage fills the device, each of a few groups
    // at least; the sums of no group are the zeros of one empty split.
    const int64_t column_blocks = (size + kParameterSumThreads - 1) / kParameterSumThreads;
    const int64_t wanted = std::max<int64_t>(1, 4 * target.multiprocessors / column_blocks);
    const int64_t splits = std::max<int64_t>(1, std::min(wanted, (shape.groups + 7) / 8));
    const int64_t chunk = std::max<int64_t>(1, (shape.groups + splits - 1) / splits);
    auto* partials =
        static_cast<Acc*>(scratch.allocate(2 * static_cast<size_t>(splits * size) * sizeof(Acc)));
    layer_norm_parameter_sums<T>
        <<<tile_grid(column_blocks, splits, 1), kParameterSumThreads, 0, target.stream>>>(
            shape, operand(kLayerNormGradOut), operand(kLayerNormGradInput),
            operand(kLayerNormGradMean), operand(kLayerNormGradRstd), splits, chunk, partials,
            partials + splits * size);
    check_launch("layer_norm_parameter_sums");
    layer_norm_parameter_totals<T>
        <<<grid_blocks(size, kParameterSumThreads, target), kParameterSumThreads, 0,
           target.stream>>>(size, splits, partials, partials + splits * size,
                            static_cast<T*>(grad_weight), static_cast<T*>(grad_bias));
    check_launch("layer_norm_parameter_totals");
  });
}

void launch_batch_norm(DType dtype, const ElementwiseLaunch<6>& launch, double eps, bool has_weight,
                       bool has_bias) {
  plugin::visit_dtype<kernel_dtypes::batch_norm_inference_out>(dtype, [&](auto tag) {
    using T = device_t<typename decltype(tag)::type>;
    using C = compute_t<T>;
    launch_elementwise<T, T, T, T, T, T>(launch,
                                         BatchNorm<C>{static_cast<C>(eps), has_weight, has_bias});
  });
}

}  // namespace bp::cuda
