// batch_norm_inference's two ways of computing out = (input - running_mean) /
// sqrt(running_var + eps) * weight + bias per channel (dim 1): with one strided elementwise loop
// over per-channel factors computed in the dtype's compute type for float32 and float64 (and
// the 16-bit dtypes where this CPU's oneDNN lacks them); through oneDNN for float16 and bfloat16
// where it has them (batch_norm_onednn.cpp).
#pragma once

#include "kernels/parallel_elements.h"
#include "kernels/strided_loop.h"

#include <cmath>
#include <cstdint>
#include <vector>

namespace bp::cpu {

// Whether this CPU's oneDNN computes batch normalization in `dtype`.
bool onednn_batch_norm_supports(DType dtype);

// batch_norm_inference through oneDNN, for a dtype onednn_batch_norm_supports; weight and bias
// may be absent (null).
void onednn_batch_norm(const TensorView& input, const TensorView* weight, const TensorView* bias,
                       const TensorView& mean, const TensorView& variance, double eps,
                       const TensorView& out);

// out = (x - mean) * factor + shift, with factor = weight / sqrt(var + eps) and shift = bias
// per channel, in T's compute type.
template <typename T>
void batch_norm_loops(const TensorView& input, const TensorView* weight, const TensorView* bias,
                      const TensorView& mean, const TensorView& variance, double eps,
                      const TensorView& out) {
  using Compute = compute_t<T>;
  const int64_t channels = input.size(1);
  auto channel_value = [](const TensorView& view, int64_t c) {
    return static_cast<Compute>(view.data<const T>()[c * view.stride(0)]);
  };
  std::vector<Compute> means(static_cast<size_t>(channels)), factors(means.size()),
      shifts(means.size());
  for (int64_t c = 0; c < channels; ++c) {
    const auto i = static_cast<size_t>(c);
    means[i] = channel_value(mean, c);
    factors[i] = Compute(1) / std::sqrt(channel_value(variance, c) + static_cast<Compute>(eps));
    if (weight) factors[i] *= channel_value(*weight, c);
    shifts[i] = bias ? channel_value(*bias, c) : Compute(0);
  }
  // The per-channel arrays broadcast over input's shape: stride 1 along dim 1, 0 elsewhere.
  DimValues<int64_t> per_channel(static_cast<size_t>(input.dim()), 0);
  per_channel[1] = 1;
  parallel_map_elements(
      out.sizes(),
      [](Compute x, Compute m, Compute factor, Compute shift) { return (x - m) * factor + shift; },
      output_operand<T>(out), input_operand<T>(input),
      Operand<const Compute>{means.data(), per_channel.span()},
      Operand<const Compute>{factors.data(), per_channel.span()},
      Operand<const Compute>{shifts.data(), per_channel.span()});
}

}  // namespace bp::cpu
