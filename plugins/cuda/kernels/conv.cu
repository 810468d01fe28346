// conv2d as an implicit GEMM (conv_tiling.h), for when cuDNN is not there or cannot run a case.
#include "conv_tiling.h"
#include "device_support.cuh"

namespace bp::cuda {
namespace {

struct DeviceConversions {
  template <typename T>
  __host__ __device__ static compute_t<T> to_compute(T value) {
    return bp::cuda::to_compute(value);
  }
  template <typename T, typename V>
  __host__ __device__ static T from_compute(V value) {
    return bp::cuda::from_compute<T>(value);
  }
};

// This thread's part of the block, for run_conv_tile.
template <typename T, typename TileShape>
class DeviceBlock {
 public:
  using Shape = TileShape;
  using Memory = ConvTileMemory<compute_t<T>, Shape>;

  __device__ explicit DeviceBlock(Memory& memory) : memory_(memory), thread_(static_cast<int>(threadIdx.x)) {}

  template <typename Phase>
  __device__ void run(Phase&& phase) {
    phase(thread_);
    __syncthreads();
  }
  __device__ Memory& memory() { return memory_; }

 private:
  Memory& memory_;
  ConvTileThread<T, compute_t<T>, Shape, DeviceConversions> thread_;
};

// Tiles are taken grid-stride, groups along z and channel tiles along y beyond the grid's limits.
template <typename T, typename Shape>
__global__ void __launch_bounds__(Shape::kThreads) conv2d_implicit_gemm(ConvGemm gemm) {
  __shared__ typename DeviceBlock<T, Shape>::Memory memory;
  DeviceBlock<T, Shape> block(memory);
  const int64_t pixel_tiles = (gemm.pixels + Shape::kPixels - 1) / Shape::kPixels;
  const int64_t channel_tiles = (gemm.group_out + Shape::kChannels - 1) / Shape::kChannels;
  for (int64_t group = blockIdx.z; group < gemm.groups; group += gridDim.z) {
    for (int64_t pixel_tile = blockIdx.x; pixel_tile < pixel_tiles; pixel_tile += gridDim.x) {
      for (int64_t channel_tile = blockIdx.y; channel_tile < channel_tiles; channel_tile += gridDim.y) {
        run_conv_tile(gemm, group, pixel_tile * Shape::kPixels, channel_tile * Shape::kChannels, block);
      }
    }
  }
}

constexpr int64_t kMaxGridYZ = 65535;

template <typename T, typename Shape>
void launch_tiles(const ConvGemm& gemm, const LaunchTarget& target) {
  const dim3 grid(static_cast<unsigned int>(std::min<int64_t>((gemm.pixels + Shape::kPixels - 1) / Shape::kPixels,
                                                              INT32_MAX)),
                  static_cast<unsigned int>(
                      std::min<int64_t>((gemm.group_out + Shape::kChannels - 1) / Shape::kChannels, kMaxGridYZ)),
                  static_cast<unsigned int>(std::min<int64_t>(gemm.groups, kMaxGridYZ)));
  conv2d_implicit_gemm<T, Shape><<<grid, Shape::kThreads, 0, target.stream>>>(gemm);
  check_launch("conv2d_implicit_gemm");
}

}  // namespace

void launch_conv2d(DType dtype, const Image& input, const Image& weight, const void* bias, int64_t bias_stride,
                   const Image& out, const SlidingWindow& window, int64_t groups, const LaunchTarget& target) {
  // An empty out has nothing to compute, and its zero sizes could not serve as divisors.
  if (out.sizes[0] * out.sizes[1] * out.sizes[2] * out.sizes[3] == 0) return;
  const ConvGemm gemm(input, weight, bias, bias_stride, out, window, groups);
  dispatch_dtype<FloatingDType>("conv2d", dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (gemm.group_out > NarrowConvTile::kChannels) {
      launch_tiles<T, WideConvTile>(gemm, target);
    } else {
      launch_tiles<T, NarrowConvTile>(gemm, target);
    }
  });
}

}  // namespace bp::cuda
