// The CUDA backend's environment variables (docs/environment.md), read once per process.
#pragma once

namespace bp::cuda {

// The value of a 0-or-1 variable `name` whose text is `value` (NULL when unset): true for "1",
// false for "0", `fallback` when unset; anything else is a warning (bp::plugin::warn), and
// `fallback`.
bool switch_value(const char* name, const char* value, bool fallback);

// BACKPLANE_CUDA_ALLOW_TF32 (default 0): whether float32 matrix products and convolutions may
// use TF32 tensor cores (inputs rounded to 10 mantissa bits, several times faster).
bool tf32_allowed();

// BACKPLANE_CUDA_CUDNN (default 1): whether conv2d goes through cuDNN, where the plugin was built
// with it; 0 runs the plugin's own implicit-GEMM kernel.
bool cudnn_allowed();

// Which formulations conv2d may run through cuDNN: the tensors as they are (NCHW), or
// channels-last copies (NHWC, which cuDNN's tensor-core kernels read and write on Hopper).
enum class ConvLayout {
  Measured,  // both, and the one that ran faster on the problem's first call
  Nchw,
  Nhwc,  // wherever cuDNN runs the problem so; elsewhere NCHW
};

// The value of BACKPLANE_CUDA_CONV_LAYOUT whose text is `value` (NULL when unset): "auto"
// (Measured), "nchw" or "nhwc"; anything else is a warning, and Measured.
ConvLayout conv_layout_value(const char* value);

// BACKPLANE_CUDA_CONV_LAYOUT (default auto), read the first time conv2d runs.
ConvLayout conv_layout();

}  // namespace bp::cuda
