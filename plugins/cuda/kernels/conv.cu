// conv2d as an implicit GEMM, for when cuDNN is not there (or cannot run a case): for each group,
// out (the N * H_out * W_out output pixels by the group's output channels) is the product of the
// input's unfolded windows (pixels by the group's input channels times the kernel's taps, formed
// on the fly as shared-memory tiles are loaded, padding read as 0) and the weight (taps by output
// channels). One output per thread, in 16 x 16 tiles; accumulated in float (double for Double).
#include "device_support.cuh"

namespace bp::cuda {
namespace {

constexpr int kTile = 16;

template <typename T>
__global__ void __launch_bounds__(kTile * kTile)
    conv2d_implicit_gemm(Image input, Image weight, const T* bias, int64_t bias_stride, Image out,
                         SlidingWindow window, int64_t groups) {
  using Acc = compute_t<T>;
  __shared__ Acc pixels_tile[kTile][kTile + 1];   // [tap][pixel]
  __shared__ Acc weights_tile[kTile][kTile + 1];  // [tap][channel]
  const T* in = static_cast<const T*>(input.data);
  const T* w = static_cast<const T*>(weight.data);
  T* o = static_cast<T*>(out.data);
  const int tx = static_cast<int>(threadIdx.x), ty = static_cast<int>(threadIdx.y);
  const int64_t out_h = out.sizes[2], out_w = out.sizes[3], plane = out_h * out_w;
  const int64_t kernel_h = weight.sizes[2], kernel_w = weight.sizes[3], taps_per_channel = kernel_h * kernel_w;
  const int64_t group_in = input.sizes[1] / groups, group_out = out.sizes[1] / groups;
  const int64_t pixels = out.sizes[0] * plane;
  const int64_t taps = group_in * taps_per_channel;
  const int64_t pixel_tiles = (pixels + kTile - 1) / kTile, channel_tiles = (group_out + kTile - 1) / kTile;

  for (int64_t g = blockIdx.z; g < groups; g += gridDim.z) {
    for (int64_t pixel_tile = blockIdx.x; pixel_tile < pixel_tiles; pixel_tile += gridDim.x) {
      for (int64_t channel_tile = blockIdx.y; channel_tile < channel_tiles; channel_tile += gridDim.y) {
        // This thread loads pixel (tile + tx) of the input tile, and computes output pixel
        // (tile + tx) of channel (tile + ty): neighbouring threads touch neighbouring pixels.
        const int64_t pixel = pixel_tile * kTile + tx;
        const int64_t channel = channel_tile * kTile + ty;
        const int64_t n = pixel / plane, oy = pixel % plane / out_w, ox = pixel % out_w;
        Acc total = 0;
        for (int64_t tap0 = 0; tap0 < taps; tap0 += kTile) {
          {  // the input tile: tap (tap0 + ty) of pixel (tile + tx)
            const int64_t tap = tap0 + ty;
            Acc value = 0;
            if (pixel < pixels && tap < taps) {
              const int64_t ci = tap / taps_per_channel, ky = tap % taps_per_channel / kernel_w, kx = tap % kernel_w;
              const int64_t iy = oy * window.stride[0] - window.padding[0] + ky * window.dilation[0];
              const int64_t ix = ox * window.stride[1] - window.padding[1] + kx * window.dilation[1];
              if (iy >= 0 && iy < input.sizes[2] && ix >= 0 && ix < input.sizes[3]) {
                value = to_compute(in[n * input.strides[0] + (g * group_in + ci) * input.strides[1] +
                                      iy * input.strides[2] + ix * input.strides[3]]);
              }
            }
            pixels_tile[ty][tx] = value;
          }
          {  // the weight tile: tap (tap0 + ty) of channel (tile + tx)
            const int64_t tap = tap0 + ty;
            const int64_t weight_channel = channel_tile * kTile + tx;
            Acc value = 0;
            if (weight_channel < group_out && tap < taps) {
              const int64_t ci = tap / taps_per_channel, ky = tap % taps_per_channel / kernel_w, kx = tap % kernel_w;
              value = to_compute(w[(g * group_out + weight_channel) * weight.strides[0] + ci * weight.strides[1] +
                                   ky * weight.strides[2] + kx * weight.strides[3]]);
            }
            weights_tile[ty][tx] = value;
          }
          __syncthreads();
#pragma unroll
          for (int i = 0; i < kTile; ++i) total += pixels_tile[i][tx] * weights_tile[i][ty];
          __syncthreads();
        }
        if (pixel < pixels && channel < group_out) {
          const int64_t c = g * group_out + channel;
          if (bias) total += to_compute(bias[c * bias_stride]);
          o[n * out.strides[0] + c * out.strides[1] + oy * out.strides[2] + ox * out.strides[3]] =
              from_compute<T>(total);
        }
      }
    }
  }
}

constexpr int64_t kMaxGridYZ = 65535;

}  // namespace

void launch_conv2d(DType dtype, const Image& input, const Image& weight, const void* bias, int64_t bias_stride,
                   const Image& out, const SlidingWindow& window, int64_t groups, const LaunchTarget& target) {
  const int64_t pixels = out.sizes[0] * out.sizes[2] * out.sizes[3];
  const int64_t group_out = out.sizes[1] / groups;
  if (pixels == 0 || group_out == 0) return;
  dispatch_dtype<FloatingDType>("conv2d", dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const dim3 grid(static_cast<unsigned int>(std::min<int64_t>((pixels + kTile - 1) / kTile, INT32_MAX)),
                    static_cast<unsigned int>(std::min<int64_t>((group_out + kTile - 1) / kTile, kMaxGridYZ)),
                    static_cast<unsigned int>(std::min<int64_t>(groups, kMaxGridYZ)));
    conv2d_implicit_gemm<T><<<grid, dim3(kTile, kTile), 0, target.stream>>>(
        input, weight, static_cast<const T*>(bias), bias_stride, out, window, groups);
    check_launch("conv2d_implicit_gemm");
  });
}

}  // namespace bp::cuda
