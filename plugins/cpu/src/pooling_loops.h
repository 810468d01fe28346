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
using plugin::Window2d;

// out[n, c, y, x] = the max of input's window (y, x) under `window` (padding never wins; NaN
// does), for (N, C, H, W) views of any strides.
void max_pool2d_loops(const TensorView& input, const TensorView& out, const Window2d& window);

// out[n, c, y, x] = the sum of input's window (rows, cols) divided by rows.divisor[y] *
// cols.divisor[x] (or by `divisor_override`), for (N, C, H, W) views of any strides.
void average_pool2d_loops(const TensorView& input, const TensorView& out, const PoolAxis& rows,
                          const PoolAxis& cols, std::optional<int64_t> divisor_override);

}  // namespace bp::cpu
