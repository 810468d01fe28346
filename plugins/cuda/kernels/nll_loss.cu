// Launches of nll_loss's kernels (nll_loss.cuh), and the report of a target out of range once
// they are done.
#include "kernels/cuda_call.h"
#include "kernels/nll_loss.cuh"

namespace bp::cuda {
namespace {

IndexError* cleared_error(const LaunchTarget& target, GroupScratch& scratch) {
  auto* error = static_cast<IndexError*>(scratch.allocate(sizeof(IndexError)));
  check_cuda(cudaMemsetAsync(error, 0xFF, sizeof(IndexError), target.stream),
             "clearing nll_loss's error record");
  return error;
}

// The target at the first sample recorded as out of range, if any; waits for the launch.
std::optional<int64_t> bad_target(const NllLoss& loss, const IndexError* error,
                                  const LaunchTarget& target) {
  IndexError found{};
  check_cuda(cudaMemcpyAsync(&found, error, sizeof found, cudaMemcpyDeviceToHost, target.stream),
             "reading nll_loss's error record");
  check_cuda(cudaStreamSynchronize(target.stream), "waiting for nll_loss");
  if (found.first_position == kNoIndexError) return std::nullopt;
  int64_t value = 0;
  check_cuda(cudaMemcpyAsync(&value, loss.target + found.first_position, sizeof value,
                             cudaMemcpyDeviceToHost, target.stream),
             "reading the target out of range");
  check_cuda(cudaStreamSynchronize(target.stream), "reading the target out of range");
  return value;
}

}  // namespace

std::optional<int64_t> launch_nll_loss_forward(DType dtype, const NllLoss& loss, void* output,
                                               void* total_weight, const LaunchTarget& target,
                                               GroupScratch& scratch) {
  IndexError* error = cleared_error(target, scratch);
  plugin::visit_dtype<kernel_dtypes::nll_loss_forward_output>(dtype, [&](auto tag) {
    using T = device_t<typename decltype(tag)::type>;
    nll_loss_forward<T><<<1, kLossThreads, 0, target.stream>>>(
        loss, static_cast<T*>(output), static_cast<T*>(total_weight), error);
    check_launch("nll_loss_forward");
  });
  return bad_target(loss, error, target);
}

std::optional<int64_t> launch_nll_loss_backward(DType dtype, const NllLoss& loss,
                                                const void* grad_output, bool per_sample,
                                                const void* total_weight, void* grad_input,
                                                const LaunchTarget& target, GroupScratch& scratch) {
  if (loss.samples == 0) return std::nullopt;
  IndexError* error = cleared_error(target, scratch);
  plugin::visit_dtype<kernel_dtypes::nll_loss_backward_grad_input>(dtype, [&](auto tag) {
    using T = device_t<typename decltype(tag)::type>;
    nll_loss_backward<T>
        <<<grid_blocks(loss.samples, kLossThreads, target), kLossThreads, 0, target.stream>>>(
            loss, static_cast<const T*>(grad_output), per_sample,
            static_cast<const T*>(total_weight), static_cast<T*>(grad_input), error);
    check_launch("nll_loss_backward");
  });
  return bad_target(loss, error, target);
}

}  // namespace bp::cuda
