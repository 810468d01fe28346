// Launches of the implicit-GEMM conv2d (conv.cuh), for when cuDNN is not there or cannot run a
// case.
#include "kernels/conv.cuh"

namespace bp::cuda {

void launch_conv2d(DType dtype, const Image& input, const Image& weight, const void* bias,
                   int64_t bias_stride, const Image& out, const SlidingWindow& window,
                   int64_t groups, const LaunchTarget& target) {
  // An empty out has nothing to compute, and its zero sizes could not serve as divisors.
  if (out.sizes[0] * out.sizes[1] * out.sizes[2] * out.sizes[3] == 0) return;
  const ConvGemm gemm(input, weight, bias, bias_stride, out, window, groups);
  plugin::visit_dtype<kernel_dtypes::conv2d_out>(dtype, [&](auto tag) {
    using T = device_t<typename decltype(tag)::type>;
    if (gemm.group_out > NarrowConvTile::kChannels) {
      conv2d_implicit_gemm<T, WideConvTile>
          <<<conv_grid<WideConvTile>(gemm), WideConvTile::kThreads, 0, target.stream>>>(gemm);
    } else {
      conv2d_implicit_gemm<T, NarrowConvTile>
          <<<conv_grid<NarrowConvTile>(gemm), NarrowConvTile::kThreads, 0, target.stream>>>(gemm);
    }
    check_launch("conv2d_implicit_gemm");
  });
}

}  // namespace bp::cuda
