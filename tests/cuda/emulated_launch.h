// CUDA kernels compiled by the host compiler and launched on host threads, for the tests of
// kernel logic on machines without a GPU. Include this before any kernel header: it takes over
// CUDA's execution-space keywords (kernels become plain function templates, __shared__ arrays
// static, so that the threads of a block share them) and its built-in variables, and supplies
// the intrinsics the kernels use (barriers, warp shuffles, fences, atomics); warp instructions
// beyond those are emulated from gather_warp.
//
// A launch runs its blocks one after another, each with one host thread per CUDA thread: the
// barriers and shuffles then synchronise as on a GPU, and a block that reads what another block
// wrote sees it, as a kernel ordering its blocks by atomics and fences would. What this cannot
// show: the speed, races the host threads' timing does not expose, and warp-synchronous code
// that relies on lanes running in lockstep without a shuffle or barrier between them. A warp
// shuffle or __syncwarp that some of the warp's lanes do not reach (they returned), or a shuffle
// across the segments of its width, is undefined on a GPU: here it stops the process, saying so.
#pragma once

#include "kernels/launch.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <type_traits>

#undef __global__
#undef __device__
#undef __host__
#undef __forceinline__
#undef __launch_bounds__
#undef __shared__
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ static
// groups.cuh then leaves dynamic shared memory to the declaration below.
#define BP_CUDA_EMULATED_LAUNCH 1

namespace bp::cuda {
// The running block's dynamic shared memory.
extern unsigned char* dynamic_shared;
}  // namespace bp::cuda

namespace bp::cuda::emulated {

// What a CUDA thread knows of its place in the launch.
struct ThreadPlace {
  uint3 thread_index;
  uint3 block_index;
  dim3 block_dim;
  dim3 grid_dim;
};
const ThreadPlace& this_thread();

// Runs `kernel` (a call of a kernel with its arguments) as a launch of `grid` blocks of `block`
// threads, with `dynamic_shared_bytes` of dynamic shared memory per block. Blocks must hold
// whole warps, or fewer than 32 threads in one.
void launch(dim3 grid, dim3 block, size_t dynamic_shared_bytes,
            const std::function<void()>& kernel);

// A device of few multiprocessors for the launch layouts, so that grids stay a few blocks: each
// block is as many host threads as it has CUDA threads.
LaunchTarget small_device(int multiprocessors = 1, size_t shared_memory = 48 * 1024);

inline constexpr int kWarpLanes = 32;

// This thread's lane in its warp.
int this_lane();

inline constexpr size_t kMaxExchangedBytes = 64;

// Every lane of the warp hands in `size` bytes (at most kMaxExchangedBytes) at `mine`; each gets
// all of them, lane by lane, in `all` (kWarpLanes * size bytes). Every lane must take part.
void exchange_in_warp(const void* mine, size_t size, void* all);

// `mine` of every lane of this thread's warp.
template <typename T>
std::array<T, kWarpLanes> gather_warp(const T& mine) {
  static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= kMaxExchangedBytes);
  std::array<T, kWarpLanes> all;
  exchange_in_warp(&mine, sizeof(T), all.data());
  return all;
}

}  // namespace bp::cuda::emulated

#define threadIdx (::bp::cuda::emulated::this_thread().thread_index)
#define blockIdx (::bp::cuda::emulated::this_thread().block_index)
#define blockDim (::bp::cuda::emulated::this_thread().block_dim)
#define gridDim (::bp::cuda::emulated::this_thread().grid_dim)

void __syncthreads();
void __syncwarp();
void __threadfence();
// Every lane of the warp must take part (the kernels pass a full mask).
unsigned int __shfl_xor_sync(unsigned int mask, unsigned int value, int lane_mask, int width);
unsigned int __shfl_sync(unsigned int mask, unsigned int value, int source_lane, int width);
unsigned int atomicAdd(unsigned int* address, unsigned int value);
unsigned long long atomicMin(unsigned long long* address, unsigned long long value);
