// Launches of the pooling kernels and their gradients (pool.cuh).
#include "kernels/cuda_call.h"
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

std::optional<int64_t> launch_check_pool_indices(const Image& indices, int64_t plane_size,
                                                 const LaunchTarget& target,
                                                 GroupScratch& scratch) {
  const int64_t total = indices.sizes[0] * indices.sizes[1] * indices.sizes[2] * indices.sizes[3];
  if (total == 0) return std::nullopt;
  auto* error = static_cast<IndexError*>(scratch.allocate(sizeof(IndexError)));
  check_cuda(cudaMemsetAsync(error, 0xFF, sizeof(IndexError), target.stream),
             "clearing the pooling indices' check");
  check_pool_indices<<<grid_blocks(total, kPoolThreads, target), kPoolThreads, 0, target.stream>>>(
      indices, plane_size, total, error);
  check_launch("check_pool_indices");
  IndexError found{};
  check_cuda(cudaMemcpyAsync(&found, error, sizeof found, cudaMemcpyDeviceToHost, target.stream),
             "reading the pooling indices' check");
  check_cuda(cudaStreamSynchronize(target.stream), "waiting for the pooling indices' check");
  if (found.first_position == kNoIndexError) return std::nullopt;
  const auto i = static_cast<int64_t>(found.first_position);
  const int64_t width = indices.sizes[3], height = indices.sizes[2], channels = indices.sizes[1];
  const int64_t offset = i / (width * height * channels) * indices.strides[0] +
                         i / (width * height) % channels * indices.strides[1] +
                         i / width % height * indices.strides[2] + i % width * indices.strides[3];
  int64_t value = 0;
  check_cuda(cudaMemcpyAsync(&value, static_cast<const int64_t*>(indices.data) + offset,
                             sizeof value, cudaMemcpyDeviceToHost, target.stream),
             "reading the pooling index out of range");
  check_cuda(cudaStreamSynchronize(target.stream), "reading the pooling index out of range");
  return value;
}

}  // namespace bp::cuda
