// embedding and index_select: elements picked along one dimension by Int64 indices. Elements
// move unchanged, so there is one kernel per element width. An index out of range is recorded
// (the first one to be seen) rather than read from, and reported once the launch is done.
//
// Launched by gather.cu; a header so that the host tests compile this kernel too
// (tests/cuda/emulated_launch.h).
#pragma once

#include "elementwise.cuh"

namespace bp::cuda {
// Internal to each includer: the kernel library and the host tests each compile their own.
namespace {

struct IndexError {
  unsigned int found;
  long long value;
};

template <typename Bits>
__global__ void __launch_bounds__(kElementwiseThreads, kElementwiseMinBlocks)
    gather(StridedShape<3> shape, int64_t n, Bits* out, const Bits* src, const int64_t* index, int64_t index_stride,
           int64_t limit, IndexError* error) {
  for (int64_t i = global_thread(); i < n; i += grid_threads()) {
    int64_t at[3];
    shape.offsets(i, at);
    const int64_t picked = index[at[2]];
    if (picked < 0 || picked >= limit) {
      if (atomicExch(&error->found, 1u) == 0) error->value = picked;
      continue;
    }
    out[at[0]] = src[at[1] + picked * index_stride];
  }
}

}  // namespace
}  // namespace bp::cuda
