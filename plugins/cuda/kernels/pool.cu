// Launches of the pooling kernel (pool.cuh).
#include "kernels/pool.cuh"

namespace bp::cuda {

void launch_pool2d(DType dtype, PoolKind kind, const Image& input, const Image& out, const SlidingWindow& window,
                   const LaunchTarget& target) {
  const int64_t total = out.sizes[0] * out.sizes[1] * out.sizes[2] * out.sizes[3];
  if (total == 0) return;
  dispatch_dtype<FloatingDType>("pooling", dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    pool2d<T><<<grid_blocks(total, kPoolThreads, target), kPoolThreads, 0, target.stream>>>(kind, input, out, window,
                                                                                             total);
    check_launch("pool2d");
  });
}

}  // namespace bp::cuda
