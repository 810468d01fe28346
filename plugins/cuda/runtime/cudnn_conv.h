// conv2d through cuDNN (built only where CMake found cuDNN): a handle per device, and the
// algorithm cuDNN measured fastest for each problem the first time it came, kept so that a
// repeated convolution skips the search. Float32 uses TF32 tensor cores only when
// BACKPLANE_CUDA_ALLOW_TF32=1.
#pragma once

#include "kernels/launch.h"
#include "runtime/device.h"

#include <functional>

namespace bp::cuda {

// out = conv2d(input, weight) over `window` and `groups`, queued on the device's stream; with
// `write_bias`, which must fill out with the bias broadcast along dim 1, plus that bias. Returns
// false when cuDNN cannot run the case (empty operands, no algorithm, sizes beyond its 32-bit
// descriptors, no memory for the algorithm's workspace, a NOT_SUPPORTED status), out then holding
// no result; throws on failures. `weight` must be dense (NCHW).
bool cudnn_conv2d(Device& device, DType dtype, const Image& input, const Image& weight,
                  const Image& out, const SlidingWindow& window, int64_t groups,
                  const std::function<void()>& write_bias);

}  // namespace bp::cuda
