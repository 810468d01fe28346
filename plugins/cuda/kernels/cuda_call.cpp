#include "kernels/cuda_call.h"

namespace bp::cuda {

std::string cuda_error_text(cudaError_t error) {
  return std::string(cudaGetErrorName(error)) + " (" + cudaGetErrorString(error) + ")";
}

void check_cuda(cudaError_t error, std::string_view action) {
  if (error == cudaSuccess) return;
  // A sticky error (a kernel fault) stays whatever we do; others are only remembered as the
  // thread's last error, which would otherwise fail the next launch check.
  cudaGetLastError();
  const bp_status code =
      error == cudaErrorMemoryAllocation ? BP_STATUS_OUT_OF_MEMORY : BP_STATUS_DEVICE_ERROR;
  throw plugin::Error(code, std::string(action) + ": " + cuda_error_text(error));
}

}  // namespace bp::cuda
