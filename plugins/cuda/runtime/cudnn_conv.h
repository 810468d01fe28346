// conv2d and its gradients through cuDNN (built only where CMake found cuDNN): a handle per
// device, and the formulation and algorithm measured fastest for each problem the first time it
// came, kept with the problem's descriptors so that a repeated convolution skips the search.
// Float32 uses TF32 tensor cores only when BACKPLANE_CUDA_ALLOW_TF32=1.
#pragma once

#include "kernels/launch.h"
#include "runtime/device.h"

#include <functional>

namespace bp::cuda {

// Which of a convolution's three products runs: out from input and weight (Forward), input's
// gradient from out's and weight (BackwardData), weight's gradient from input and out's
// (BackwardFilter).
enum class ConvDirection { Forward, BackwardData, BackwardFilter };

// One product of conv2d(input, weight) over `window` and `groups`, queued on the device's stream,
// writing the tensor `direction` computes (out, input or weight, which then hold gradients):
// Forward with `write_bias`, which must fill the image it is given (out's sizes, any strides)
// with the bias broadcast along dim 1, adds that bias. The gradients take deterministic
// algorithms only. Returns false when cuDNN cannot run the case (empty operands, no algorithm,
// sizes beyond its 32-bit descriptors, no memory for the algorithm's workspace, a NOT_SUPPORTED
// status), the written tensor then holding no result; throws on failures. `weight` must be dense
// (NCHW).
//
// Forward may run channels last (BACKPLANE_CUDA_CONV_LAYOUT): on NHWC copies of input and weight
// made by the plugin's transpose kernel, into an NHWC copy of out transposed back, where that ran
// faster on the problem's first call.
bool cudnn_convolution(Device& device, ConvDirection direction, DType dtype, const Image& input,
                       const Image& weight, const Image& out, const SlidingWindow& window,
                       int64_t groups, const std::function<void(const Image&)>& write_bias = {});

}  // namespace bp::cuda
