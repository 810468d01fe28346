// conv2d through cuDNN (built only where CMake found cuDNN): a handle per device, and the
// algorithm cuDNN's heuristic picked for each problem, kept so that a repeated convolution skips
// the search. Float32 uses TF32 tensor cores only when BACKPLANE_CUDA_ALLOW_TF32=1.
#pragma once

#include "device.h"
#include "launch.h"

namespace bp::cuda {

// out = conv2d(input, weight) over `window` and `groups`, without bias, queued on the device's
// stream. Returns false when cuDNN cannot run the case (empty operands, no algorithm, sizes
// beyond its 32-bit descriptors, no memory for the algorithm's workspace, a NOT_SUPPORTED status),
// leaving out untouched; throws on failures. `weight` must be dense (NCHW).
bool cudnn_conv2d(Device& device, DType dtype, const Image& input, const Image& weight, const Image& out,
                  const SlidingWindow& window, int64_t groups);

}  // namespace bp::cuda
