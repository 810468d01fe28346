// Launches of the pooling kernel (pool.cuh).
#include "kernels/pool.cuh"

namespace bp::cuda {
namespace {

template <typename Kernel>
void launch_pool(PoolKind kind, DType dtype, const Image& input, const Image& out,
                 const SlidingWindow& window, int64_t total, const LaunchTarget& target) {
  plugin::visit_dtype<Kernel>(dtype, [&](auto tag) {
    using T = device_t<typename decltype(tag)::type>;
    const unsigned int blocks = grid_blocks(total, kPoolThreads, target);
    pool2d<T><<<blocks, kPoolThreads, 0, target.stream>>>(kind, input, out, window, total);
    check_launch("pool2d");
  });
}

}  // namespace

void launch_pool2d(DType dtype, PoolKind kind, const Image& input, const Image& out,
                   const SlidingWindow& window, const LaunchTarget& target) {
  const int64_t total = out.sizes[0] * out.sizes[1] * out.sizes[2] * out.sizes[3];
  if (total == 0) return;
  switch (kind) {
    case PoolKind::Max:
      return launch_pool<kernel_dtypes::max_pool2d_out>(kind, dtype, input, out, window, total,
                                                        target);
    case PoolKind::Average:
      return launch_pool<kernel_dtypes::avg_pool2d_out>(kind, dtype, input, out, window, total,
                                                        target);
    case PoolKind::AdaptiveAverage:
      return launch_pool<kernel_dtypes::adaptive_avg_pool2d_out>(kind, dtype, input, out, window,
                                                                 total, target);
  }
}

}  // namespace bp::cuda
