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

using plugin::PoolAxis;

enum class PoolReduction { Max, Average };

// out[n, c, y, x] = the max, or the sum divided by rows.divisor[y] * cols.divisor[x] (or by
// `divisor_override`), of input's window (rows, cols), for (N, C, H, W) views of any strides.
void pool2d_loops(const TensorView& input, const TensorView& out, const PoolAxis& rows,
                  const PoolAxis& cols, PoolReduction reduction,
                  std::optional<int64_t> divisor_override);

}  // namespace bp::cpu
