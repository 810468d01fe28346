// batch_norm_inference's two ways of computing out = (input - running_mean) /
// sqrt(running_var + eps) * weight + bias per channel (dim 1): with loops over per-channel factors
// computed in the dtype's compute type for float32 and float64 (and the 16-bit dtypes where this
// CPU's oneDNN lacks them), plane by plane where input and out are contiguous, else one strided
// elementwise loop; through oneDNN for float16 and bfloat16 where it has them
// (batch_norm_onednn.cpp).
#pragma once

#include "kernels/multiversion.h"
#include "kernels/parallel_elements.h"
#include "kernels/strided_loop.h"

#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace bp::cpu {

// Whether this CPU's oneDNN computes batch normalization in `dtype`.
bool onednn_batch_norm_supports(DType dtype);

// batch_norm_inference through oneDNN, for a dtype onednn_batch_norm_supports; weight and bias
// may be absent (null).
void onednn_batch_norm(const TensorView& input, const TensorView* weight, const TensorView* bias,
                       const TensorView& mean, const TensorView& variance, double eps,
                       const TensorView& out);

namespace batch_norm_detail {

// out = (x - means[c]) * factors[c] + shifts[c] over planes [first, end) of `plane` elements
// each, plane p of channel p % channels: the same arithmetic as the strided loop, on the
// plane's three values held in registers.
template <typename C>
BP_CPU_MULTIVERSIONED void normalize_planes(const C* input, C* out, int64_t first, int64_t end,
                                            int64_t plane, int64_t channels, const C* means,
                                            const C* factors, const C* shifts) {
  for (int64_t p = first; p < end; ++p) {
    const int64_t c = p % channels;
    const C mean = means[c], factor = factors[c], shift = shifts[c];
    const C* x = input + p * plane;
    C* y = out + p * plane;
    for (int64_t i = 0; i < plane; ++i) y[i] = (x[i] - mean) * factor + shift;
  }
}

}  // namespace batch_norm_detail

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
  if constexpr (std::is_same_v<T, Compute>) {
    // Planes split across threads whole, so that each element's arithmetic is that of the
    // single-threaded loop.
    if (input.is_contiguous() && out.is_contiguous()) {
      const int64_t planes = input.size(0) * channels;
      if (planes == 0) return;
      const int64_t plane = input.numel() / planes;
      parallel_for(planes, grain_for(plane), [&](int64_t begin, int64_t end) {
        batch_norm_detail::normalize_planes(input.data<const T>(), out.data<T>(), begin, end, plane,
                                            channels, means.data(), factors.data(), shifts.data());
      });
      return;
    }
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
