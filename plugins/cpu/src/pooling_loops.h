// The plugin's own 2-D pooling loops: every floating dtype and every rule PyTorch has for which
// elements a window reads and what an average divides by, including the ones oneDNN cannot
// express (divisor_override, adaptive windows that overlap, averages whose padded window runs
// past the padding in ceil_mode) and NaN propagation in max pooling.
#pragma once

#include "strided_loop.h"

#include <backplane/sdk/window2d.hpp>

#include <cstdint>
#include <optional>
#include <vector>

namespace bp::cpu {

// The windows along one spatial dim: output index o reads count[o] input elements, the first at
// first[o] and then every `step`; `divisor[o]` is what an average divides their sum by along
// this dim (the product over both dims is the divisor).
struct PoolAxis {
  std::vector<int64_t> first, count, divisor;
  int64_t step = 1;
};

// Pooling windows of `window` along dim `d` over `in_size` inputs, for `out_size` outputs.
// Averages divide by the padded window's extent within the padded input when `include_padding`,
// else by the elements inside the input.
PoolAxis pooling_axis(const plugin::Window2d& window, int d, int64_t in_size, int64_t out_size,
                      bool include_padding);
// adaptive_avg_pool2d's windows: [floor(o * in / out), ceil((o + 1) * in / out)).
PoolAxis adaptive_axis(int64_t in_size, int64_t out_size);

enum class PoolReduction { Max, Average };

// out[n, c, y, x] = the max, or the sum divided by rows.divisor[y] * cols.divisor[x] (or by
// `divisor_override`), of input's window (rows, cols), for (N, C, H, W) views of any strides.
void pool2d_loops(const TensorView& input, const TensorView& out, const PoolAxis& rows,
                  const PoolAxis& cols, PoolReduction reduction,
                  std::optional<int64_t> divisor_override);

}  // namespace bp::cpu
