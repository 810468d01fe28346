// What every kernel shares: the device type of each SDK storage type and the type it computes
// in, the conversions between them (those of the CPU backend), 16-byte vectors, warp and team
// reductions, grid-stride loops, and launch checks.
#pragma once

#include "kernels/launch.h"
#include "kernels/launch_layout.h"
#include "kernels/vector_alignment.h"

#include <backplane/sdk/dispatch.hpp>
#include <backplane/sdk/dtype_set.hpp>
#include <backplane/sdk/half.hpp>
#include <backplane/sdk/kernel_dtypes.h>
#include <backplane/sdk/status.hpp>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>

namespace bp::cuda {

// --- element types ------------------------------------------------------------------------------

// The device type that holds elements of an SDK storage type (bp::plugin::StorageType): CUDA's
// own 16-bit floats, whose conversions and arithmetic the GPU has, for Half and BFloat16; the
// storage type itself otherwise (Bool is one byte holding 0 or 1). Kernels are instantiated
// through bp::plugin::visit_dtype for the dtypes their op declares in ops.yaml
// (<backplane/sdk/kernel_dtypes.h>), each tag's type mapped through device_t.
template <typename T>
struct DeviceType {
  using type = T;
};
template <>
struct DeviceType<Half> {
  using type = __half;
};
template <>
struct DeviceType<BFloat16> {
  using type = __nv_bfloat16;
};
template <typename T>
using device_t = typename DeviceType<T>::type;

template <typename T>
inline constexpr bool kIsHalfType = std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>;

// What arithmetic on T happens in: float for the 16-bit floats, T itself otherwise (as the CPU
// backend's compute_t).
template <typename T>
using compute_t = std::conditional_t<kIsHalfType<T>, float, T>;

template <typename T>
inline constexpr bool kIsFloating = std::is_floating_point_v<compute_t<T>>;

// Unsigned integers of each element width, for kernels that move bits.
template <typename Fn>
void visit_bits_type(size_t element_size, Fn&& fn) {
  switch (element_size) {
    case 1: return fn(plugin::TypeTag<uint8_t>{});
    case 2: return fn(plugin::TypeTag<uint16_t>{});
    case 4: return fn(plugin::TypeTag<uint32_t>{});
    case 8: return fn(plugin::TypeTag<uint64_t>{});
  }
  throw plugin::Error(BP_STATUS_INTERNAL,
                      "no element type is " + std::to_string(element_size) + " bytes wide");
}

// --- conversions --------------------------------------------------------------------------------

template <typename T>
__host__ __device__ __forceinline__ compute_t<T> to_compute(T value) {
  if constexpr (std::is_same_v<T, __half>) {
    return __half2float(value);
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return __bfloat162float(value);
  } else {
    return value;
  }
}

// `value` (any arithmetic type) stored as T, as a C++ static_cast would: the 16-bit floats round
// to nearest even through float, and Bool is value != 0 (NaN is true).
template <typename T, typename V>
__host__ __device__ __forceinline__ T from_compute(V value) {
  if constexpr (std::is_same_v<T, __half>) {
    return __float2half_rn(static_cast<float>(value));
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return __float2bfloat16_rn(static_cast<float>(value));
  } else if constexpr (std::is_same_v<T, bool>) {
    return value != V(0);
  } else if constexpr (std::is_integral_v<T> && sizeof(T) < sizeof(int32_t) &&
                       std::is_floating_point_v<V>) {
    // Through int32, as x86 converts and so the CPU backend: a value past T's range wraps, where
    // the device's own conversion to T would saturate.
    return static_cast<T>(static_cast<int32_t>(value));
  } else {
    return static_cast<T>(value);
  }
}

template <typename T>
__device__ __forceinline__ bool is_nan(T value) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::isnan(value);
  } else {
    return false;
  }
}

// PyTorch's maximum and minimum: NaN wins over any number. With Plus, the combining functions of
// elementwise ops and of group reductions alike.
template <bool kLarger>
struct NanWinningExtreme {
  template <typename C>
  __device__ C operator()(C x, C y) const {
    if (is_nan(x)) return x;
    if (is_nan(y)) return y;
    return (kLarger ? x < y : y < x) ? y : x;
  }
};
using Maximum = NanWinningExtreme<true>;
using Minimum = NanWinningExtreme<false>;

struct Plus {
  template <typename C>
  __device__ C operator()(C x, C y) const {
    return x + y;
  }
};

// --- math in float or double
// ---------------------------------------------------------------------- The accurate CUDA
// functions (never the __expf-style intrinsics), chosen by argument type.

__device__ __forceinline__ float math_exp(float x) { return expf(x); }
__device__ __forceinline__ double math_exp(double x) { return exp(x); }
__device__ __forceinline__ float math_log(float x) { return logf(x); }
__device__ __forceinline__ double math_log(double x) { return log(x); }
__device__ __forceinline__ float math_sqrt(float x) { return sqrtf(x); }
__device__ __forceinline__ double math_sqrt(double x) { return sqrt(x); }
__device__ __forceinline__ float math_tanh(float x) { return tanhf(x); }
__device__ __forceinline__ double math_tanh(double x) { return tanh(x); }

// --- vectors ------------------------------------------------------------------------------------

// V elements of T, aligned for one vector access (the widths and alignment tests are in
// vector_alignment.h).
template <typename T, int V>
struct alignas(sizeof(T) * V) Vec {
  T v[V];
};

// --- reductions across threads ------------------------------------------------------------------

// `value` from the lane `lane_mask` away (XOR) within groups of `width` lanes, for any
// trivially copyable type.
template <typename T, typename Shuffle>
__device__ __forceinline__ T shuffle_words(const T& value, Shuffle shuffle) {
  static_assert(std::is_trivially_copyable_v<T>);
  constexpr int kWords = (sizeof(T) + 3) / 4;
  uint32_t words[kWords] = {};
  memcpy(words, &value, sizeof(T));
#pragma unroll
  for (int i = 0; i < kWords; ++i) words[i] = shuffle(words[i]);
  T result;
  memcpy(&result, words, sizeof(T));
  return result;
}

template <typename T>
__device__ __forceinline__ T shuffle_xor(const T& value, int lane_mask, int width) {
  return shuffle_words(
      value, [&](uint32_t w) { return __shfl_xor_sync(0xffffffffu, w, lane_mask, width); });
}

// `value` of the first lane of each group of `width` lanes.
template <typename T>
__device__ __forceinline__ T shuffle_from_first(const T& value, int width) {
  return shuffle_words(value, [&](uint32_t w) { return __shfl_sync(0xffffffffu, w, 0, width); });
}

// A team is blockDim.x consecutive threads (a power of two up to kMaxTeamThreads) working on one
// group; a block holds blockDim.y teams and whole warps. combine must be associative and
// commutative for the values given, up to rounding; the combination order is fixed, so results
// are deterministic. Every thread of the block must call it, and every thread of a team gets the
// same result (that of the team's first lane, where lanes combined in different orders).
// `warp_partials` is shared memory of kMaxTeamThreads / kWarpSize entries.
template <typename T, typename Combine>
__device__ T team_reduce(T value, Combine combine, T* warp_partials) {
  const int team = static_cast<int>(blockDim.x);
  const int width = team < kWarpSize ? team : kWarpSize;
  for (int mask = width / 2; mask > 0; mask /= 2)
    value = combine(value, shuffle_xor(value, mask, width));
  if (team <= kWarpSize) return shuffle_from_first(value, width);
  const int thread = static_cast<int>(threadIdx.y * blockDim.x + threadIdx.x);
  const int warp = thread / kWarpSize;
  if (thread % kWarpSize == 0) warp_partials[warp] = value;
  __syncthreads();
  const int warps_per_team = team / kWarpSize;
  const int first = static_cast<int>(threadIdx.y) * warps_per_team;
  T result = warp_partials[first];
  for (int w = 1; w < warps_per_team; ++w) result = combine(result, warp_partials[first + w]);
  __syncthreads();  // the partials may be written again by the next call
  return result;
}

// --- grid-stride loops --------------------------------------------------------------------------

__device__ __forceinline__ int64_t global_thread() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}

__device__ __forceinline__ int64_t grid_threads() {
  return static_cast<int64_t>(gridDim.x) * blockDim.x;
}

// Throws a bp::plugin::Error naming `kernel` if its launch failed (a bad configuration, no
// kernel image for this device, a sticky error from earlier work).
void check_launch(std::string_view kernel);

// The shared memory `kernel` declares statically (its __shared__ arrays), as compiled for the
// current device.
size_t static_shared_memory(const void* kernel, std::string_view name);

// Where `dynamic_bytes` and the kernel's `static_bytes` together exceed kDefaultSharedMemory,
// raises `kernel`'s dynamic shared memory limit to all the device allows beside its static
// memory (`max_shared_memory`, the opt-in limit). Never to this launch's size: the limit is the
// function's, so another thread's launch of the same kernel with less would lower it under this
// one.
void allow_shared_memory(const void* kernel, size_t dynamic_bytes, size_t static_bytes,
                         size_t max_shared_memory, std::string_view name);

}  // namespace bp::cuda
