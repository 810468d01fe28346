// Launches of the pooling kernels and their gradients (pool.cuh).
#include "kernels/pool.cuh"

namespace bp::cuda {

template <typename Kernel>
void launch_pool2d(DType dtype, PoolKind kind, const Image& input, const Image& out,
                   const SlidingWindow& window, const LaunchTarget& target, const Image* indices) {
  const int64_t total = out.sizes[0] * out.sizes[1] * out.sizes[2] * out.sizes[3];
  if (total == 0) return;
  plugin::visit_dtype<Kernel>(dtype, [&](auto tag) {
    using T = device_t<typename decltype(tag)::type>;
    const unsigned int blocks = grid_blocks(total, kPoolThreads, target);
    pool2d<T><<<blocks, kPoolThreads, 0, target.stream>>>(kind, input, out, window, total,
                                                          indices ? *indices : Image{});
    check_launch("pool2d");
  });
}

template void launch_pool2d<kernel_dtypes::max_pool2d_out>(DType, PoolKind, const Image&,
                                                           const Image&, const SlidingWindow&,
                                                           const LaunchTarget&, const Image*);
template void launch_pool2d<kernel_dtypes::max_pool2d_with_indices_out>(DType, PoolKind,
                                                                        const Image&, const Image&,
                                                                        const SlidingWindow&,
                                                                        const LaunchTarget&,
                                                                        const Image*);
template void launch_pool2d<kernel_dtypes::avg_pool2d_out>(DType, PoolKind, const Image&,
                                                           const Image&, const SlidingWindow&,
                                                           const LaunchTarget&, const Image*);
template void launch_pool2d<kernel_dtypes::adaptive_avg_pool2d_out>(DType, PoolKind, const Image&,
                                                                    const Image&,
                                                                    const SlidingWindow&,
                                                                    const LaunchTarget&,
                                                                    const Image*);

namespace {

template <typename Kernel>
void launch_backward(DType dtype, PoolKind kind, const Image& grad_output, const Image& indices,
                     const Image& grad_input, const SlidingWindow& window, int64_t total,
                     const LaunchTarget& target) {
  plugin::visit_dtype<Kernel>(dtype, [&](auto tag) {
    using T = device_t<typename decltype(tag)::type>;
    const unsigned int blocks = grid_blocks(total, kPoolThreads, target);
    pool2d_backward<T><<<blocks, kPoolThreads, 0, target.stream>>>(kind, grad_output, indices,
                                                                   grad_input, window, total);
    check_launch("pool2d_backward");
  });
}

}  // namespace

void launch_pool2d_backward(DType dtype, PoolKind kind, const Image& grad_output,
                            const Image& indices, const Image& grad_input,
                            const SlidingWindow& window, const LaunchTarget& target) {
  const int64_t total =
      grad_input.sizes[0] * grad_input.sizes[1] * grad_input.sizes[2] * grad_input.sizes[3];
  if (total == 0) return;
  switch (kind) {
    case PoolKind::Max:
      return launch_backward<kernel_dtypes::max_pool2d_with_indices_backward_grad_input>(
          dtype, kind, grad_output, indices, grad_input, window, total, target);
    case PoolKind::Average:
      return launch_backward<kernel_dtypes::avg_pool2d_backward_grad_input>(
          dtype, kind, grad_output, indices, grad_input, window, total, target);
    case PoolKind::AdaptiveAverage:
      return launch_backward<kernel_dtypes::_adaptive_avg_pool2d_backward_out>(
          dtype, kind, grad_output, indices, grad_input, window, total, target);
  }
}

}  // namespace bp::cuda
