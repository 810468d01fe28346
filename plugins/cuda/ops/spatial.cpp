// conv2d, through cuDNN where the plugin was built with it (and BACKPLANE_CUDA_CUDNN is not 0),
// else, or where cuDNN has no algorithm, through the implicit-GEMM kernel of kernels/conv.cu;
// and max_pool2d, avg_pool2d and adaptive_avg_pool2d (kernels/pool.cu). Floating dtypes; the
// meta step has checked shapes and given every tensor input's dtype.
#include "CUDANativeFunctions.h"

#include "runtime/tensor_access.h"
#if BACKPLANE_CUDA_CUDNN
#include "runtime/cudnn_conv.h"
#include "runtime/environment.h"

#include <functional>
#endif

#include <backplane/sdk/window2d.hpp>

#include <string>

namespace bp::cuda {
namespace {

Image image_of(const TensorView& view) {
  plugin::check(view.dim() == 4, "expected a 4-D (N, C, H, W) tensor");
  Image image;
  image.data = address_of(view);
  for (int d = 0; d < 4; ++d) {
    image.sizes[d] = view.size(d);
    image.strides[d] = view.stride(d);
  }
  return image;
}

SlidingWindow sliding_window(const plugin::Window2d& window) {
  SlidingWindow result;
  for (int d = 0; d < 2; ++d) {
    result.kernel[d] = window.kernel[d];
    result.stride[d] = window.stride[d];
    result.padding[d] = window.padding[d];
    result.dilation[d] = window.dilation[d];
  }
  return result;
}

#if BACKPLANE_CUDA_CUDNN
// out = bias along dim 1, broadcast over the other dims.
void fill_with_bias(Device& device, const TensorView& bias, const TensorView& out) {
  DimValues<int64_t> strides(4, 0);
  strides[1] = bias.stride(0);
  const size_t element_bytes = element_size(out.dtype());
  for_each_launch<2>(
      device, out.sizes(),
      {operand_of(out), Operand{address_of(bias), strides.span(), element_bytes}},
      [&](const ElementwiseLaunch<2>& launch) { launch_copy_bits(element_bytes, launch); });
}

// cuDNN reads weights as a dense NCHW array.
bool conv2d_through_cudnn(Device& device, const Image& input, const TensorView& weight,
                          const TensorView* bias, const TensorView& out,
                          const SlidingWindow& window, int64_t groups) {
  const DType dtype = out.dtype();
  std::function<void()> write_bias;
  if (bias) write_bias = [&] { fill_with_bias(device, *bias, out); };
  if (weight.is_contiguous()) {
    return cudnn_conv2d(device, dtype, input, image_of(weight), image_of(out), window, groups,
                        write_bias);
  }
  DeviceScratch scratch(device);
  Image dense = image_of(weight);
  dense.data = scratch.allocate(static_cast<size_t>(weight.numel()) * element_size(dtype));
  int64_t step = 1;  // row-major
  for (int d = 3; d >= 0; --d) {
    dense.strides[d] = step;
    step *= dense.sizes[d];
  }
  const int64_t dense_strides[4] = {dense.strides[0], dense.strides[1], dense.strides[2],
                                    dense.strides[3]};
  for_each_launch<2>(
      device, weight.sizes(),
      {Operand{static_cast<char*>(dense.data), dense_strides, element_size(dtype)},
       operand_of(weight)},
      [&](const ElementwiseLaunch<2>& launch) { launch_copy_bits(element_size(dtype), launch); });
  return cudnn_conv2d(device, dtype, input, dense, image_of(out), window, groups, write_bias);
}
#endif

}  // namespace

void conv2d_out(const TensorView& input, const TensorView& weight, const TensorView* bias,
                std::span<const int64_t> stride, std::span<const int64_t> padding,
                std::span<const int64_t> dilation, int64_t groups, const TensorView& out) {
  constexpr std::string_view op = "conv2d";
  require_dtype(op, "weight", weight, input.dtype());
  require_dtype(op, "out", out, input.dtype());
  if (bias) require_dtype(op, "bias", *bias, input.dtype());
  if (out.numel() == 0) return;
  const OnDevice on(out);
  Device& device = on.device();
  const plugin::Window2d window{{weight.size(2), weight.size(3)},
                                plugin::expand_pair(stride, {1, 1}),
                                plugin::expand_pair(padding, {0, 0}),
                                plugin::expand_pair(dilation, {1, 1})};
  const SlidingWindow sliding = sliding_window(window);
  const Image in = image_of(input), result = image_of(out);
#if BACKPLANE_CUDA_CUDNN
  if (cudnn_allowed() && conv2d_through_cudnn(device, in, weight, bias, out, sliding, groups))
    return;
#endif
  launch_conv2d(out.dtype(), in, image_of(weight), bias ? address_of(*bias) : nullptr,
                bias ? bias->stride(0) : 0, result, sliding, groups, device.launch_target());
}

void max_pool2d_out(const TensorView& self, std::span<const int64_t> kernel_size,
                    std::span<const int64_t> stride, std::span<const int64_t> padding,
                    std::span<const int64_t> dilation, bool /*ceil_mode: in out's size*/,
                    const TensorView& out) {
  require_dtype("max_pool2d", "out", out, self.dtype());
  const SlidingWindow window =
      sliding_window(plugin::pooling_window(kernel_size, stride, padding, dilation));
  const OnDevice on(out);
  launch_pool2d(out.dtype(), PoolKind::Max, image_of(self), image_of(out), window,
                on.launch_target());
}

void avg_pool2d_out(const TensorView& self, std::span<const int64_t> kernel_size,
                    std::span<const int64_t> stride, std::span<const int64_t> padding,
                    bool /*ceil_mode: in out's size*/, bool count_include_pad,
                    std::optional<int64_t> divisor_override, const TensorView& out) {
  require_dtype("avg_pool2d", "out", out, self.dtype());
  static constexpr int64_t kNoDilation[] = {1};
  SlidingWindow window =
      sliding_window(plugin::pooling_window(kernel_size, stride, padding, kNoDilation));
  window.count_include_pad = count_include_pad;
  window.divisor_override = divisor_override.value_or(0);
  const OnDevice on(out);
  launch_pool2d(out.dtype(), PoolKind::Average, image_of(self), image_of(out), window,
                on.launch_target());
}

void adaptive_avg_pool2d_out(const TensorView& self,
                             std::span<const int64_t> /*output_size: out's size*/,
                             const TensorView& out) {
  require_dtype("adaptive_avg_pool2d", "out", out, self.dtype());
  const OnDevice on(out);
  launch_pool2d(out.dtype(), PoolKind::AdaptiveAverage, image_of(self), image_of(out),
                SlidingWindow{}, on.launch_target());
}

}  // namespace bp::cuda
