// Where 16-byte vector loads and stores may start: the kernels read and write dense operands as
// vectors of the widest operand's elements, after a scalar head up to the first aligned address.
// Compiled by both the host compiler and nvcc.
#pragma once

#include "kernels/host_device.h"

#include <algorithm>
#include <cstdint>

namespace bp::cuda {

inline constexpr int kVectorBytes = 16;

// Elements per 16-byte access of the widest of Types.
template <typename... Types>
inline constexpr int kVectorWidth = kVectorBytes / static_cast<int>((std::max)({sizeof(Types)...}));

template <int V, typename T>
BP_CUDA_HOST_DEVICE bool is_vector_aligned(const T* p) {
  return reinterpret_cast<uintptr_t>(p) % (sizeof(T) * V) == 0;
}

// How many elements of T lie between p and the next address aligned for V of them (0 where p is
// aligned; meaningless where p is not aligned for one T, which is_vector_aligned then refuses).
template <int V, typename T>
BP_CUDA_HOST_DEVICE int64_t elements_to_vector_alignment(const T* p) {
  constexpr uintptr_t kBytes = sizeof(T) * V;
  return static_cast<int64_t>((kBytes - reinterpret_cast<uintptr_t>(p) % kBytes) % kBytes /
                              sizeof(T));
}

}  // namespace bp::cuda
