// Launches of embedding's and index_select's gather (gather.cuh), and the report of an index out
// of range once the launch is done.
#include "cuda_call.h"
#include "elementwise_launch.cuh"
#include "gather.cuh"

namespace bp::cuda {

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
