// conv2d's gradients without cuDNN, as direct sums. grad_input: one thread per element, over the
// group's output channels and the kernel's taps whose windows reach it. grad_weight: one block per
// element, its threads striding over the batch and the output pixels, their sums combined in a
// fixed order. Both accumulate in float (double for Double), in the same order on every run.
//
// Launched by conv_backward.cu; a header so that the host tests compile these kernels too
// (tests/cuda/emulated_launch.h).
#pragma once

#include "kernels/device_support.cuh"

#include <cstdint>

namespace bp::cuda {
// Internal to each includer: the kernel library and the host tests each compile their own.
namespace {

constexpr int kConvInputGradThreads = 256;
// Threads of a grad_weight block: one team (device_support.cuh's team_reduce).
constexpr int kConvWeightGradThreads = 256;

// The output index o along one dimension whose window reads input index i at tap k, or -1.
__device__ __forceinline__ int64_t output_at_tap(const SlidingWindow& w, int d, int64_t i,
                                                 int64_t k, int64_t out_size) {
  const int64_t reach = i + w.padding[d] - k * w.dilation[d];  // o * stride
  if (reach < 0 || reach % w.stride[d] != 0) return -1;
  const int64_t o = reach / w.stride[d];
  return o < out_size ? o : -1;
}

template <typename T>
__global__ void __launch_bounds__(kConvInputGradThreads)
    conv2d_input_gradient(Image grad_output, Image weight, Image grad_input, SlidingWindow window,
                          int64_t groups, int64_t total) {
  using C = compute_t<T>;
  const T* g = static_cast<const T*>(grad_output.data);
  const T* w = static_cast<const T*>(weight.data);
  T* result = static_cast<T*>(grad_input.data);
  const int64_t channels = grad_input.sizes[1], in_h = grad_input.sizes[2],
                in_w = grad_input.sizes[3];
  const int64_t group_in = channels / groups, group_out = grad_output.sizes[1] / groups;
  const int64_t kernel_h = weight.sizes[2], kernel_w = weight.sizes[3];
  for (int64_t i = global_thread(); i < total; i += grid_threads()) {
    const int64_t x = i % in_w;
    const int64_t y = i / in_w % in_h;
    const int64_t c = i / (in_w * in_h) % channels;
    const int64_t n = i / (in_w * in_h * channels);
    const int64_t group = c / group_in, tap_channel = c % group_in;
    C sum = 0;
    for (int64_t o = group * group_out; o < (group + 1) * group_out; ++o) {
      const T* g_plane = g + n * grad_output.strides[0] + o * grad_output.strides[1];
      const T* w_taps = w + o * weight.strides[0] + tap_channel * weight.strides[1];
      for (int64_t ky = 0; ky < kernel_h; ++ky) {
        const int64_t oy = output_at_tap(window, 0, y, ky, grad_output.sizes[2]);
        if (oy < 0) continue;
        for (int64_t kx = 0; kx < kernel_w; ++kx) {
          const int64_t ox = output_at_tap(window, 1, x, kx, grad_output.sizes[3]);
          if (ox < 0) continue;
          sum += to_compute(g_plane[oy * grad_output.strides[2] + ox * grad_output.strides[3]]) *
                 to_compute(w_taps[ky * weight.strides[2] + kx * weight.strides[3]]);
        }
      }
    }
    result[n * grad_input.strides[0] + c * grad_input.strides[1] + y * grad_input.strides[2] +
           x * grad_input.strides[3]] = from_compute<T>(sum);
  }
}

// blockDim.x == kConvWeightGradThreads, blockDim.y == 1.
template <typename T>
__global__ void __launch_bounds__(kConvWeightGradThreads)
    conv2d_weight_gradient(Image grad_output, Image input, Image grad_weight, SlidingWindow window,
                           int64_t groups, int64_t total) {
  using C = compute_t<T>;
  __shared__ C warp_partials[kMaxTeamThreads / kWarpSize];
  const T* g = static_cast<const T*>(grad_output.data);
  const T* in = static_cast<const T*>(input.data);
  T* result = static_cast<T*>(grad_weight.data);
  const int64_t group_in = grad_weight.sizes[1], kernel_h = grad_weight.sizes[2],
                kernel_w = grad_weight.sizes[3];
  const int64_t group_out = grad_weight.sizes[0] / groups;
  const int64_t out_h = grad_output.sizes[2], out_w = grad_output.sizes[3];
  const int64_t terms = grad_output.sizes[0] * out_h * out_w;
  for (int64_t e = blockIdx.x; e < total; e += gridDim.x) {
    const int64_t kx = e % kernel_w;
    const int64_t ky = e / kernel_w % kernel_h;
    const int64_t tap_channel = e / (kernel_w * kernel_h) % group_in;
    const int64_t o = e / (kernel_w * kernel_h * group_in);
    const int64_t c = o / group_out * group_in + tap_channel;
    C sum = 0;
    for (int64_t t = threadIdx.x; t < terms; t += blockDim.x) {
      const int64_t ox = t % out_w;
      const int64_t oy = t / out_w % out_h;
      const int64_t n = t / (out_w * out_h);
      const int64_t y = oy * window.stride[0] - window.padding[0] + ky * window.dilation[0];
      const int64_t x = ox * window.stride[1] - window.padding[1] + kx * window.dilation[1];
      if (y < 0 || y >= input.sizes[2] || x < 0 || x >= input.sizes[3]) continue;
      sum += to_compute(g[n * grad_output.strides[0] + o * grad_output.strides[1] +
                          oy * grad_output.strides[2] + ox * grad_output.strides[3]]) *
             to_compute(in[n * input.strides[0] + c * input.strides[1] + y * input.strides[2] +
                           x * input.strides[3]]);
    }
    sum = team_reduce(sum, Plus{}, warp_partials);
    if (threadIdx.x == 0) {
      result[o * grad_weight.strides[0] + tap_channel * grad_weight.strides[1] +
             ky * grad_weight.strides[2] + kx * grad_weight.strides[3]] = from_compute<T>(sum);
    }
  }
}

}  // namespace
}  // namespace bp::cuda
