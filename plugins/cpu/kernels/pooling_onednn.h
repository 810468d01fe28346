// oneDNN's average pooling (pooling_onednn.cpp), for the averages it computes as PyTorch does:
// which dtype it averages in, which windows it takes, and the call.
#pragma once

#include "kernels/strided_loop.h"

#include <backplane/sdk/window2d.hpp>

#include <cstdint>
#include <optional>

namespace bp::cpu {

using plugin::Window2d;

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
