// embedding and index_select: elements picked along one dimension by Int64 indices. Elements
// move unchanged, so there is one kernel per element width. An index out of range is recorded
// (the first one to be seen) rather than read from, and reported once the launch is done.
#include "cuda_call.h"
#include "elementwise_launch.cuh"

namespace bp::cuda {
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

std::optional<int64_t> launch_gather(size_t element_size, const ElementwiseLaunch<3>& launch, int64_t index_stride,
                                     int64_t limit, GroupScratch& scratch) {
  if (launch.numel == 0) return std::nullopt;
  const LaunchTarget& target = launch.target;
  auto* error = static_cast<IndexError*>(scratch.allocate(sizeof(IndexError)));
  check_cuda(cudaMemsetAsync(error, 0, sizeof(IndexError), target.stream), "clearing gather's error flag");
  visit_bits_type(element_size, [&](auto tag) {
    using Bits = typename decltype(tag)::type;
    gather<<<grid_blocks(launch.numel, kElementwiseThreads, target), kElementwiseThreads, 0, target.stream>>>(
        shape_of(launch), launch.numel, static_cast<Bits*>(launch.data[0]), static_cast<const Bits*>(launch.data[1]),
        static_cast<const int64_t*>(launch.data[2]), index_stride, limit, error);
    check_launch("gather");
  });
  IndexError found{};
  check_cuda(cudaMemcpyAsync(&found, error, sizeof found, cudaMemcpyDeviceToHost, target.stream),
             "reading gather's error flag");
  check_cuda(cudaStreamSynchronize(target.stream), "waiting for gather");
  if (found.found == 0) return std::nullopt;
  return static_cast<int64_t>(found.value);
}

}  // namespace bp::cuda
