// conv2d as an implicit GEMM in register tiles. For each group, out is the product of the input's
// unfolded windows (output pixels by taps) and the weight (taps by the group's output channels),
// where a tap is one of the group's input channels at one kernel position. A block takes a tile
// of pixels by channels and walks the taps kTaps at a time: its threads load both operand tiles
// into shared memory (the windows formed on the fly, padding read as 0), then each thread adds
// the step's products to the few pixels by few channels it keeps in registers.
//
// Launched by conv.cu; a header so that the host tests compile this kernel too
// (tests/cuda/emulated_launch.h).
#pragma once

#include "kernels/device_support.cuh"

#include <algorithm>
#include <cstdint>

namespace bp::cuda {
// Internal to each includer: the kernel library and the host tests each compile their own.
namespace {

// One conv2d as one GEMM per group, its divisions prepared on the host; out must not be empty.
struct ConvGemm {
  Image input, weight, out;
  SlidingWindow window;
  const void* bias = nullptr;  // none when null
  int64_t bias_stride = 0;
  int64_t groups = 1, group_in = 0, group_out = 0;
  int64_t pixels = 0;  // N * H_out * W_out, the GEMM's rows
  int64_t taps = 0;    // group_in * kH * kW, its inner dimension
  Divisor out_plane, out_width, kernel_plane, kernel_width;

  ConvGemm(const Image& input_, const Image& weight_, const void* bias_, int64_t bias_stride_,
           const Image& out_, const SlidingWindow& window_, int64_t groups_)
      : input(input_),
        weight(weight_),
        out(out_),
        window(window_),
        bias(bias_),
        bias_stride(bias_stride_),
        groups(groups_),
        group_in(input_.sizes[1] / groups_),
        group_out(out_.sizes[1] / groups_),
        pixels(out_.sizes[0] * out_.sizes[2] * out_.sizes[3]),
        taps(group_in * weight_.sizes[2] * weight_.sizes[3]),
        out_plane(out_.sizes[2] * out_.sizes[3], pixels),
        out_width(out_.sizes[3], out_.sizes[2] * out_.sizes[3]),
        // A kernel of no taps divides nothing, but its divisors must still be valid.
        kernel_plane(std::max<int64_t>(weight_.sizes[2] * weight_.sizes[3], 1), taps),
        kernel_width(std::max<int64_t>(weight_.sizes[3], 1), weight_.sizes[2] * weight_.sizes[3]) {}

  struct Pixel {
    int64_t image, y, x;
  };
  // GEMM row `row` (below `pixels`) as an output pixel.
  __device__ Pixel pixel(int64_t row) const {
    const int64_t image = out_plane.divide(row), within = row - image * out.sizes[2] * out.sizes[3];
    const int64_t y = out_width.divide(within);
    return {image, y, within - y * out.sizes[3]};
  }

  struct Tap {
    int64_t channel, y, x;  // the input channel within the group; the kernel's row and column
  };
  // Inner index `index` (below `taps`) as a tap.
  __device__ Tap tap(int64_t index) const {
    const int64_t channel = kernel_plane.divide(index),
                  within = index - channel * weight.sizes[2] * weight.sizes[3];
    const int64_t y = kernel_width.divide(within);
    return {channel, y, within - y * weight.sizes[3]};
  }
};

// A block's tile of Pixels by Channels outputs, each thread's PixelsPerThread by
// ChannelsPerThread of them taking every (Pixels / PixelsPerThread)-th pixel and every
// (Channels / ChannelsPerThread)-th channel, so that a warp's neighbouring threads read
// neighbouring shared-memory words and write neighbouring pixels.
template <int Pixels, int Channels, int PixelsPerThread, int ChannelsPerThread>
struct ConvTileShape {
  static constexpr int kPixels = Pixels, kChannels = Channels;
  static constexpr int kPixelsPerThread = PixelsPerThread, kChannelsPerThread = ChannelsPerThread;
  static constexpr int kTaps = 16;  // per step
  static constexpr int kPixelThreads = Pixels / PixelsPerThread;
  static constexpr int kChannelThreads = Channels / ChannelsPerThread;
  static constexpr int kThreads = kPixelThreads * kChannelThreads;
  static_assert(Pixels % PixelsPerThread == 0 && Channels % ChannelsPerThread == 0);
  // Each thread then loads the windows of one pixel, fixed for the whole tile.
  static_assert(kThreads % Pixels == 0 && kTaps % (kThreads / Pixels) == 0);
};

// Groups of more than 16 output channels.
using WideConvTile = ConvTileShape<128, 64, 8, 4>;
// Groups of up to 16 (depthwise convolutions among them): more pixels per tile instead.
using NarrowConvTile = ConvTileShape<256, 16, 8, 2>;

// A block's shared memory: one step's operand tiles, in the type the sums are taken in.
template <typename Acc, typename Shape>
struct ConvTileMemory {
  Acc windows[Shape::kTaps][Shape::kPixels];
  // One column more: a warp loads the weights along taps, and its stores would otherwise fall
  // kChannels words apart, into a few banks.
  Acc weights[Shape::kTaps][Shape::kChannels + 1];
};

// One thread's part of a block's tile.
template <typename T, typename Shape>
class ConvTileThread {
 public:
  using Acc = compute_t<T>;

  __device__ explicit ConvTileThread(int thread) : thread_(thread) {}

  // Begins the tile whose first output is (first_pixel, first_channel) of `group`.
  __device__ void start(const ConvGemm& gemm, int64_t group, int64_t first_pixel,
                        int64_t first_channel) {
    group_ = group;
    first_pixel_ = first_pixel;
    first_channel_ = first_channel;
    for (auto& row : sums_) {
      for (Acc& sum : row) sum = Acc(0);
    }
    const int64_t loaded = first_pixel + thread_ % Shape::kPixels;
    loads_pixel_ = loaded < gemm.pixels;
    if (!loads_pixel_) return;
    const ConvGemm::Pixel pixel = gemm.pixel(loaded);
    window_y_ = pixel.y * gemm.window.stride[0] - gemm.window.padding[0];
    window_x_ = pixel.x * gemm.window.stride[1] - gemm.window.padding[1];
    window_offset_ =
        pixel.image * gemm.input.strides[0] + group * gemm.group_in * gemm.input.strides[1];
  }

  // Loads this thread's share of taps [first_tap, first_tap + kTaps) of both operand tiles.
  __device__ void load(const ConvGemm& gemm, ConvTileMemory<Acc, Shape>& memory,
                       int64_t first_tap) const {
    const T* input = static_cast<const T*>(gemm.input.data);
    const int column = thread_ % Shape::kPixels;
    for (int row = thread_ / Shape::kPixels; row < Shape::kTaps;
         row += Shape::kThreads / Shape::kPixels) {
      Acc value = 0;
      if (loads_pixel_ && first_tap + row < gemm.taps) {
        const ConvGemm::Tap tap = gemm.tap(first_tap + row);
        const int64_t y = window_y_ + tap.y * gemm.window.dilation[0];
        const int64_t x = window_x_ + tap.x * gemm.window.dilation[1];
        if (y >= 0 && y < gemm.input.sizes[2] && x >= 0 && x < gemm.input.sizes[3]) {
          value = to_compute(input[window_offset_ + tap.channel * gemm.input.strides[1] +
                                   y * gemm.input.strides[2] + x * gemm.input.strides[3]]);
        }
      }
      memory.windows[row][column] = value;
    }
    // Weights along taps, which a dense weight lays out consecutively.
    const T* weight = static_cast<const T*>(gemm.weight.data);
    for (int i = thread_; i < Shape::kTaps * Shape::kChannels; i += Shape::kThreads) {
      const int row = i % Shape::kTaps, column = i / Shape::kTaps;
      const int64_t channel = first_channel_ + column;
      Acc value = 0;
      if (channel < gemm.group_out && first_tap + row < gemm.taps) {
        const ConvGemm::Tap tap = gemm.tap(first_tap + row);
        value = to_compute(weight[(group_ * gemm.group_out + channel) * gemm.weight.strides[0] +
                                  tap.channel * gemm.weight.strides[1] +
                                  tap.y * gemm.weight.strides[2] + tap.x * gemm.weight.strides[3]]);
      }
      memory.weights[row][column] = value;
    }
  }

  // Adds the loaded step's products to this thread's sums.
  __device__ void accumulate(const ConvTileMemory<Acc, Shape>& memory) {
    const int pixel = thread_ % Shape::kPixelThreads, channel = thread_ / Shape::kPixelThreads;
#pragma unroll
    for (int k = 0; k < Shape::kTaps; ++k) {
      Acc windows[Shape::kPixelsPerThread], weights[Shape::kChannelsPerThread];
#pragma unroll
      for (int i = 0; i < Shape::kPixelsPerThread; ++i) {
        windows[i] = memory.windows[k][pixel + i * Shape::kPixelThreads];
      }
#pragma unroll
      for (int j = 0; j < Shape::kChannelsPerThread; ++j) {
        weights[j] = memory.weights[k][channel + j * Shape::kChannelThreads];
      }
#pragma unroll
      for (int i = 0; i < Shape::kPixelsPerThread; ++i) {
#pragma unroll
        for (int j = 0; j < Shape::kChannelsPerThread; ++j) sums_[i][j] += windows[i] * weights[j];
      }
    }
  }

  // Writes this thread's outputs that lie inside out, with the bias added.
  __device__ void store(const ConvGemm& gemm) const {
    T* out = static_cast<T*>(gemm.out.data);
    const T* bias = static_cast<const T*>(gemm.bias);
    const int pixel_thread = thread_ % Shape::kPixelThreads,
              channel_thread = thread_ / Shape::kPixelThreads;
#pragma unroll
    for (int i = 0; i < Shape::kPixelsPerThread; ++i) {
      const int64_t row = first_pixel_ + pixel_thread + i * Shape::kPixelThreads;
      if (row >= gemm.pixels) break;
      const ConvGemm::Pixel pixel = gemm.pixel(row);
      const int64_t pixel_offset = pixel.image * gemm.out.strides[0] +
                                   pixel.y * gemm.out.strides[2] + pixel.x * gemm.out.strides[3];
#pragma unroll
      for (int j = 0; j < Shape::kChannelsPerThread; ++j) {
        const int64_t channel = first_channel_ + channel_thread + j * Shape::kChannelThreads;
        if (channel >= gemm.group_out) break;
        const int64_t out_channel = group_ * gemm.group_out + channel;
        Acc total = sums_[i][j];
        if (bias) total += to_compute(bias[out_channel * gemm.bias_stride]);
        out[pixel_offset + out_channel * gemm.out.strides[1]] = from_compute<T>(total);
      }
    }
  }

 private:
  int thread_;
  int64_t group_ = 0, first_pixel_ = 0, first_channel_ = 0;
  // The pixel whose windows this thread loads: its window's top-left input position (padding
  // makes it negative) and the offset of its image and the group's first input channel.
  bool loads_pixel_ = false;
  int64_t window_y_ = 0, window_x_ = 0, window_offset_ = 0;
  Acc sums_[Shape::kPixelsPerThread][Shape::kChannelsPerThread];
};

// Tiles are taken grid-stride (conv_grid), groups along z and channel tiles along y beyond the
// grid's limits.
template <typename T, typename Shape>
__global__ void __launch_bounds__(Shape::kThreads) conv2d_implicit_gemm(ConvGemm gemm) {
  __shared__ ConvTileMemory<compute_t<T>, Shape> memory;
  ConvTileThread<T, Shape> thread(static_cast<int>(threadIdx.x));
  const int64_t pixel_tiles = (gemm.pixels + Shape::kPixels - 1) / Shape::kPixels;
  const int64_t channel_tiles = (gemm.group_out + Shape::kChannels - 1) / Shape::kChannels;
  for (int64_t group = blockIdx.z; group < gemm.groups; group += gridDim.z) {
    for (int64_t pixel_tile = blockIdx.x; pixel_tile < pixel_tiles; pixel_tile += gridDim.x) {
      for (int64_t channel_tile = blockIdx.y; channel_tile < channel_tiles;
           channel_tile += gridDim.y) {
        thread.start(gemm, group, pixel_tile * Shape::kPixels, channel_tile * Shape::kChannels);
        for (int64_t first_tap = 0; first_tap < gemm.taps; first_tap += Shape::kTaps) {
          thread.load(gemm, memory, first_tap);
          __syncthreads();
          thread.accumulate(memory);
          __syncthreads();  // before the next step's loads overwrite the tiles
        }
        thread.store(gemm);
      }
    }
  }
}

// The grid of a conv2d_implicit_gemm launch: a block per tile.
template <typename Shape>
dim3 conv_grid(const ConvGemm& gemm) {
  return tile_grid((gemm.pixels + Shape::kPixels - 1) / Shape::kPixels,
                   (gemm.group_out + Shape::kChannels - 1) / Shape::kChannels, gemm.groups);
}

}  // namespace
}  // namespace bp::cuda
