// Turning CUDA runtime errors into bp::plugin::Error: out of memory becomes
// BP_STATUS_OUT_OF_MEMORY, anything else BP_STATUS_DEVICE_ERROR, with CUDA's own name and text
// for the error and what the plugin was doing. (cuBLASLt and cuDNN statuses are turned into
// errors where those libraries are called.)
#pragma once

#include <backplane/sdk/status.hpp>

#include <cuda_runtime_api.h>

#include <string>
#include <string_view>

namespace bp::cuda {

// "cudaErrorMemoryAllocation (out of memory)".
std::string cuda_error_text(cudaError_t error);

// Throws unless `error` is cudaSuccess; `action` says what failed ("copying 4096 bytes to
// cuda:0"). Clears the runtime's last error first when the error is not sticky, so that the
// process stays usable.
void check_cuda(cudaError_t error, std::string_view action);

}  // namespace bp::cuda
