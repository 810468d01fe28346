// embedding and index_select: elements picked along one dimension by Int64 indices. Elements
// move unchanged, so there is one kernel per element width. An index out of range is not read
// from: the kernel records the first position of out whose index is out of range, so that the
// report names the same index as the CPU backend's whatever the order the threads ran in.
//
// Launched by gather.cu; a header so that the host tests compile this kernel too
// (tests/cuda/emulated_launch.h).
#pragma once

#include "kernels/elementwise.cuh"

namespace bp::cuda {
// Internal to each includer: the kernel library and the host tests each compile their own.
namespace {

// out's first position whose index is out of range; kNoIndexError (every byte 0xFF, as a memset
// clears it) while there is none.
struct IndexError {
  unsigned long long first_position;
};
inline constexpr unsigned long long kNoIndexError = ~0ull;

// Where the index of out's element `position` lies in the index operand.
BP_CUDA_HOST_DEVICE int64_t index_offset_at(const StridedShape<3>& shape,
                                            unsigned long long position) {
  int64_t at[3];
  shape.offsets(static_cast<int64_t>(position), at);
  return at[2];
}

template <typename Bits>
__global__ void __launch_bounds__(kElementwiseThreads, kElementwiseMinBlocks)
                                      gather(StridedShape<3> shape, int64_t n, Bits* out,
                                             const Bits* src, const int64_t* index,
                                             int64_t index_stride, int64_t limit,
                                             IndexError* error) {
  for (int64_t i = global_thread(); i < n; i += grid_threads()) {
    int64_t at[3];
    shape.offsets(i, at);
    const int64_t picked = index[at[2]];
    if (picked < 0 || picked >= limit) {
      atomicMin(&error->first_position, static_cast<unsigned long long>(i));
      continue;
    }
    out[at[0]] = src[at[1] + picked * index_stride];
  }
}

}  // namespace
}  // namespace bp::cuda
