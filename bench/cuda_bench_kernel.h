// A bare one-thread kernel (cuda_bench_kernel.cu): out[0] = a[0] + b[0].
#pragma once

#include <cuda_runtime_api.h>

cudaError_t launch_add_one_element(const float* a, const float* b, float* out, cudaStream_t stream);
