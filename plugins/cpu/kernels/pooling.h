// 2-D pooling's two ways. The plugin's own loops (pooling_loops.cpp): every floating dtype and
// every rule PyTorch has for which elements a window reads and what an average divides by,
// including the ones oneDNN cannot express (divisor_override, adaptive windows that overlap,
// averages whose padded window runs past the padding in ceil_mode) and NaN propagation in max
// pooling. And oneDNN's average pooling (pooling_onednn.cpp), for the averages it computes as
// PyTorch does.
#pragma once

#include "kernels/strided_loop.h"

#include <backplane/sdk/window2d.hpp>

#include <cstdint>
#include <optional>

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

// The dtype oneDNN averages tensors of `dtype` in, if any: their own where this CPU's oneDNN
// has it, else float32 for float16 and bfloat16.
std::optional<DType> onednn_pooling_dtype(DType dtype);

// Whether oneDNN takes the window and sizes of this pooling (each within an int).
bool onednn_pooling_takes(const Window2d& w, const TensorView& input, const TensorView& out);

// Whether no window reaches past the padding (ceil_mode may add one that does); only then does
// oneDNN's average that includes the padding divide as PyTorch's does, by the kernel's area.
bool windows_stay_in_padding(const Window2d& w, const TensorView& input, const TensorView& out);

// Average pooling through oneDNN in `dtype` (onednn_pooling_dtype's), dividing by the window's
// elements inside the input or, with include_padding, by the kernel's area.
void onednn_average_pool(const Window2d& w, const TensorView& input, const TensorView& out,
                         DType dtype, bool include_padding);

}  // namespace bp::cpu
