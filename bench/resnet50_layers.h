// The conv2d benchmarks' workload, shared by the CPU (conv_bench.cpp) and CUDA (cuda_bench.cpp)
// programs so that their rows name and size the same layers.
#pragma once

#include <cstdint>

namespace bench {

struct ConvLayer {
  const char* name;
  int64_t in_channels, out_channels, size, kernel, stride, padding;

  int64_t out_size() const { return (size + 2 * padding - kernel) / stride + 1; }
  // A multiply-add counts as two.
  double flops(int64_t batch) const {
    return 2.0 * static_cast<double>(batch * out_channels * out_size() * out_size() * in_channels *
                                     kernel * kernel);
  }
};

// One layer of each kind in ResNet-50: the stem, the 3x3 convolution of each stage, and a 1x1
// expansion.
inline constexpr ConvLayer kResNet50Layers[] = {
    {"conv1 7x7/2 3->64 224", 3, 64, 224, 7, 2, 3},
    {"res2 3x3 64->64 56", 64, 64, 56, 3, 1, 1},
    {"res2 1x1 64->256 56", 64, 256, 56, 1, 1, 0},
    {"res3 3x3 128->128 28", 128, 128, 28, 3, 1, 1},
    {"res4 3x3 256->256 14", 256, 256, 14, 3, 1, 1},
    {"res5 3x3 512->512 7", 512, 512, 7, 3, 1, 1},
};

}  // namespace bench
