// BP_CUDA_HOST_DEVICE marks the small functions that kernels and host code share: inlined for
// both under nvcc, plain inline functions for the host compiler, so that the host tests check
// the very code the kernels run.
#pragma once

#if defined(__CUDACC__)
#define BP_CUDA_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define BP_CUDA_HOST_DEVICE inline
#endif
