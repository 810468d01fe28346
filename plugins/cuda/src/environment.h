// The CUDA backend's environment variables (docs/environment.md).
#pragma once

namespace bp::cuda {

// BACKPLANE_CUDA_ALLOW_TF32: `1` lets float32 matrix products use TF32 tensor cores (inputs
// rounded to 10 mantissa bits, several times faster), `0` (the default) keeps them exact to
// float32. Any other value is a warning on stderr and the default applies.
bool allow_tf32_from(const char* value);

// The process's setting, read once.
bool tf32_allowed();

}  // namespace bp::cuda
