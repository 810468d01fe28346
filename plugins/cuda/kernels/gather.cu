// Launches of embedding's and index_select's gather (gather.cuh), and the report of the first
// index out of range once the launch is done.
#include "kernels/cuda_call.h"
#include "kernels/elementwise_launch.cuh"
#include "kernels/gather.cuh"

namespace bp::cuda {

std::optional<int64_t> launch_gather(size_t element_size, const ElementwiseLaunch<3>& launch,
                                     int64_t index_stride, int64_t limit, GroupScratch& scratch) {
  if (launch.numel == 0) return std::nullopt;
  const LaunchTarget& target = launch.target;
  auto* error = static_cast<IndexError*>(scratch.allocate(sizeof(IndexError)));
  check_cuda(cudaMemsetAsync(error, 0xFF, sizeof(IndexError), target.stream),
             "clearing gather's error record");
  const StridedShape<3> shape = shape_of(launch);
  const auto* index = static_cast<const int64_t*>(launch.data[2]);
  visit_bits_type(element_size, [&](auto tag) {
    using Bits = typename decltype(tag)::type;
    gather<<<grid_blocks(launch.numel, kElementwiseThreads, target), kElementwiseThreads, 0,
             target.stream>>>(shape, launch.numel, static_cast<Bits*>(launch.data[0]),
                              static_cast<const Bits*>(launch.data[1]), index, index_stride, limit,
                              error);
    check_launch("gather");
  });
  IndexError found{};
  check_cuda(cudaMemcpyAsync(&found, error, sizeof found, cudaMemcpyDeviceToHost, target.stream),
             "reading gather's error record");
  check_cuda(cudaStreamSynchronize(target.stream), "waiting for gather");
  if (found.first_position == kNoIndexError) return std::nullopt;
  int64_t value = 0;
  check_cuda(cudaMemcpyAsync(&value, index + index_offset_at(shape, found.first_position),
                             sizeof value, cudaMemcpyDeviceToHost, target.stream),
             "reading the index out of range");
  check_cuda(cudaStreamSynchronize(target.stream), "reading the index out of range");
  return value;
}

}  // namespace bp::cuda
