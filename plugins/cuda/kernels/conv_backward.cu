// Launches of conv2d's gradient kernels (conv_backward.cuh), for when cuDNN is not there or
// cannot run a case.
#include "kernels/conv_backward.cuh"

namespace bp::cuda {
namespace {

int64_t elements(const Image& image) {
  return image.sizes[0] * image.sizes[1] * image.sizes[2] * image.sizes[3];
}

}  // namespace

void launch_conv2d_backward_input(DType dtype, const Image& grad_output, const Image& weight,
                                  const Image& grad_input, const SlidingWindow& window,
                                  int64_t groups, const LaunchTarget& target) {
  const int64_t total = elements(grad_input);
  if (total == 0) return;
  plugin::visit_dtype<kernel_dtypes::convolution_backward_out>(dtype, [&](auto tag) {
    using T = device_t<typename decltype(tag)::type>;
    conv2d_input_gradient<T>
        <<<grid_blocks(total, kConvInputGradThreads, target), kConvInputGradThreads, 0,
           target.stream>>>(grad_output, weight, grad_input, window, groups, total);
    check_launch("conv2d_input_gradient");
  });
}

void launch_conv2d_backward_weight(DType dtype, const Image& grad_output, const Image& input,
                                   const Image& grad_weight, const SlidingWindow& window,
                                   int64_t groups, const LaunchTarget& target) {
  const int64_t total = elements(grad_weight);
  if (total == 0) return;
  plugin::visit_dtype<kernel_dtypes::convolution_backward_out>(dtype, [&](auto tag) {
    using T = device_t<typename decltype(tag)::type>;
    conv2d_weight_gradient<T>
        <<<grid_blocks(total, 1, target), kConvWeightGradThreads, 0, target.stream>>>(
            grad_output, input, grad_weight, window, groups, total);
    check_launch("conv2d_weight_gradient");
  });
}

}  // namespace bp::cuda
