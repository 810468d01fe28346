#include "runtime/device_guard.h"

#include <cuda.h>  // the driver API's types only: its functions come through the runtime

namespace bp::cuda {
namespace {

using CtxGetCurrent = CUresult (*)(CUcontext*);

// cuCtxGetCurrent, which the runtime API has no counterpart for, looked up through the runtime
// so that the plugin does not link the driver library (absent on machines without a GPU).
CtxGetCurrent ctx_get_current() {
  static const CtxGetCurrent function = [] {
    void* found = nullptr;
    cudaDriverEntryPointQueryResult result{};
    if (cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &found, 4000, cudaEnableDefault,
                                         &result) != cudaSuccess ||
        result != cudaDriverEntryPointSuccess) {
      (void)cudaGetLastError();
      return CtxGetCurrent{nullptr};
    }
    return reinterpret_cast<CtxGetCurrent>(found);
  }();
  return function;
}

}  // namespace

bool thread_has_context() {
  const CtxGetCurrent get_current = ctx_get_current();
  if (get_current == nullptr) return true;
  CUcontext context = nullptr;
  return get_current(&context) != CUDA_SUCCESS || context != nullptr;
}

}  // namespace bp::cuda
