// conv2d and its gradients (convolution_backward), through cuDNN where the plugin was built with
// it (and BACKPLANE_CUDA_CUDNN is not 0), else, or where cuDNN has no algorithm, through the
// plugin's own kernels (kernels/conv.cu, conv_backward.cu); and max_pool2d (with or without
// indices), avg_pool2d and adaptive_avg_pool2d and their gradients (kernels/pool.cu). Floating
// dtypes; the meta step has checked shapes and given every tensor input's dtype.
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

// A dense (row-major) copy of a 4-D tensor in scratch memory, for cuDNN, which reads and writes
// weights only as dense NCHW arrays.
Image dense_image(const TensorView& view, DeviceScratch& scratch) {
  Image dense = image_of(view);
  dense.data = scratch.allocate(static_cast<size_t>(view.numel()) * element_size(view.dtype()));
  int64_t step = 1;
  for (int d = 3; d >= 0; --d) {
    dense.strides[d] = step;
    step *= dense.sizes[d];
  }
  return dense;
}

// Copies `from` into `to`, two 4-D tensors of one shape and dtype.
void copy_image(Device& device, const Image& from, const Image& to, DType dtype) {
  const int64_t* sizes = from.sizes;
  for_each_launch<2>(
      device, std::span<const int64_t>(sizes, 4),
      {Operand{static_cast<char*>(to.data), to.strides, element_size(dtype)},
       Operand{static_cast<char*>(from.data), from.strides, element_size(dtype)}},
      [&](const ElementwiseLaunch<2>& launch) { launch_copy_bits(element_size(dtype), launch); });
}

#if BACKPLANE_CUDA_CUDNN
// target = bias along dim 1, broadcast over the other dims.
void fill_with_bias(Device& device, const TensorView& bias, const Image& target) {
  const int64_t bias_strides[4] = {0, bias.stride(0), 0, 0};
  const size_t element_bytes = element_size(bias.dtype());
  for_each_launch<2>(
      device, std::span<const int64_t>(target.sizes, 4),
      {Operand{static_cast<char*>(target.data), target.strides, element_bytes},
       Operand{address_of(bias), bias_strides, element_bytes}},
      [&](const ElementwiseLaunch<2>& launch) { launch_copy_bits(element_bytes, launch); });
}

// The weight as cuDNN reads it: itself where dense, else a dense copy in `scratch`.
Image dense_weight(Device& device, const TensorView& weight, DeviceScratch& scratch) {
  if (weight.is_contiguous()) return image_of(weight);
  const Image dense = dense_image(weight, scratch);
  copy_image(device, image_of(weight), dense, weight.dtype());
  return dense;
}

bool conv2d_through_cudnn(Device& device, const Image& input, const TensorView& weight,
                          const TensorView* bias, const TensorView& out,
                          const SlidingWindow& window, int64_t groups) {
  std::function<void(const Image&)> write_bias;
  if (bias) write_bias = [&](const Image& target) { fill_with_bias(device, *bias, target); };
  DeviceScratch scratch(device);
  return cudnn_convolution(device, ConvDirection::Forward, out.dtype(), input,
                           dense_weight(device, weight, scratch), image_of(out), window, groups,
                           write_bias);
}

// grad_weight through cuDNN, which writes it dense: into a dense copy where it is not.
bool weight_gradient_through_cudnn(Device& device, const Image& grad_output, const Image& input,
                                   const TensorView& grad_weight, const SlidingWindow& window,
                                   int64_t groups) {
  const DType dtype = grad_weight.dtype();
  if (grad_weight.is_contiguous()) {
    return cudnn_convolution(device, ConvDirection::BackwardFilter, dtype, input,
                             image_of(grad_weight), grad_output, window, groups);
  }
  DeviceScratch scratch(device);
  const Image dense = dense_image(grad_weight, scratch);
  if (!cudnn_convolution(device, ConvDirection::BackwardFilter, dtype, input, dense, grad_output,
                         window, groups)) {
    return false;
  }
  copy_image(device, dense, image_of(grad_weight), dtype);
  return true;
}
#endif

// The window of a convolution by `weight`.
SlidingWindow convolution_window(const TensorView& weight, std::span<const int64_t> stride,
                                 std::span<const int64_t> padding,
                                 std::span<const int64_t> dilation) {
  return sliding_window(plugin::Window2d{{weight.size(2), weight.size(3)},
                                         plugin::expand_pair(stride, {1, 1}),
                                         plugin::expand_pair(padding, {0, 0}),
                                         plugin::expand_pair(dilation, {1, 1})});
}

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
  const SlidingWindow sliding = convolution_window(weight, stride, padding, dilation);
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
  launch_pool2d<kernel_dtypes::max_pool2d_out>(out.dtype(), PoolKind::Max, image_of(self),
                                               image_of(out), window, on.launch_target());
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
  launch_pool2d<kernel_dtypes::avg_pool2d_out>(out.dtype(), PoolKind::Average, image_of(self),
                                               image_of(out), window, on.launch_target());
}

void adaptive_avg_pool2d_out(const TensorView& self,
                             std::span<const int64_t> /*output_size: out's size*/,
                             const TensorView& out) {
  require_dtype("adaptive_avg_pool2d", "out", out, self.dtype());
  const OnDevice on(out);
  launch_pool2d<kernel_dtypes::adaptive_avg_pool2d_out>(out.dtype(), PoolKind::AdaptiveAverage,
                                                        image_of(self), image_of(out),
                                                        SlidingWindow{}, on.launch_target());
}

// grad_bias sums grad_output over N, H and W (the reduction kernels); grad_input and grad_weight
// go through cuDNN's deterministic algorithms where it runs the case, else through the direct
// kernels of kernels/conv_backward.cu.
void convolution_backward_out(const TensorView& grad_output, const TensorView& input,
                              const TensorView& weight, std::span<const int64_t> stride,
                              std::span<const int64_t> padding, std::span<const int64_t> dilation,
                              int64_t groups, const TensorView& out0, const TensorView& out1,
                              const TensorView& out2) {
  constexpr std::string_view op = "convolution_backward";
  const DType dtype = grad_output.dtype();
  plugin::require_dtypes(op,
                         {{"input", &input},
                          {"weight", &weight},
                          {"grad_input", &out0},
                          {"grad_weight", &out1},
                          {"grad_bias", &out2}},
                         dtype);
  const OnDevice on(out0);
  Device& device = on.device();
  const SlidingWindow window = convolution_window(weight, stride, padding, dilation);
  const Image grad = image_of(grad_output), in = image_of(input);

  DimValues<bool> per_channel(4, true);  // grad_output's dims but the channels
  per_channel[1] = false;
  const DimValues<int64_t> bias_strides =
      reduced_output_strides(out2, per_channel, /*keepdim=*/false);
  const GroupShape<2> bias_shape = group_shape<2>(op, grad_output.sizes(), per_channel,
                                                  {grad_output.strides(), bias_strides.span()});
  DeviceScratch scratch(device);
  launch_sum(dtype, bias_shape, address_of(grad_output), address_of(out2), /*average=*/false,
             device.launch_target(), scratch);

#if BACKPLANE_CUDA_CUDNN
  const bool cudnn = cudnn_allowed();
  if (!cudnn || !cudnn_convolution(device, ConvDirection::BackwardData, dtype, image_of(out0),
                                   dense_weight(device, weight, scratch), grad, window, groups)) {
    launch_conv2d_backward_input(dtype, grad, image_of(weight), image_of(out0), window, groups,
                                 device.launch_target());
  }
  if (!cudnn || !weight_gradient_through_cudnn(device, grad, in, out1, window, groups)) {
    launch_conv2d_backward_weight(dtype, grad, in, image_of(out1), window, groups,
                                  device.launch_target());
  }
#else
  launch_conv2d_backward_input(dtype, grad, image_of(weight), image_of(out0), window, groups,
                               device.launch_target());
  launch_conv2d_backward_weight(dtype, grad, in, image_of(out1), window, groups,
                                device.launch_target());
#endif
}

void max_pool2d_with_indices_out(const TensorView& self, std::span<const int64_t> kernel_size,
                                 std::span<const int64_t> stride, std::span<const int64_t> padding,
                                 std::span<const int64_t> dilation,
                                 bool /*ceil_mode: in out's size*/, const TensorView& out,
                                 const TensorView& indices) {
  constexpr std::string_view op = "max_pool2d_with_indices";
  require_dtype(op, "out", out, self.dtype());
  require_dtype(op, "indices", indices, DType::Int64);
  const SlidingWindow window =
      sliding_window(plugin::pooling_window(kernel_size, stride, padding, dilation));
  const OnDevice on(out);
  const Image positions = image_of(indices);
  launch_pool2d<kernel_dtypes::max_pool2d_with_indices_out>(out.dtype(), PoolKind::Max,
                                                            image_of(self), image_of(out), window,
                                                            on.launch_target(), &positions);
}

// Each element of grad_input gathers grad_output where indices name it: an index that names no
// element of its window's span contributes nothing.
void max_pool2d_with_indices_backward_grad_input(
    const TensorView& grad_output, const TensorView& self, std::span<const int64_t> kernel_size,
    std::span<const int64_t> stride, std::span<const int64_t> padding,
    std::span<const int64_t> dilation, bool /*ceil_mode: in grad_output's size*/,
    const TensorView& indices, const TensorView& grad_input) {
  constexpr std::string_view op = "max_pool2d_with_indices_backward";
  require_dtype(op, "grad_input", grad_input, grad_output.dtype());
  require_dtype(op, "self", self, grad_output.dtype());
  require_dtype(op, "indices", indices, DType::Int64);
  const SlidingWindow window =
      sliding_window(plugin::pooling_window(kernel_size, stride, padding, dilation));
  const OnDevice on(grad_input);
  DeviceScratch scratch(on.device());
  const int64_t plane_size = grad_input.size(2) * grad_input.size(3);
  if (const std::optional<int64_t> bad =
          launch_check_pool_indices(image_of(indices), plane_size, on.launch_target(), scratch)) {
    throw plugin::Error(BP_STATUS_INVALID_ARGUMENT,
                        std::string(op) + ": index " + std::to_string(*bad) +
                            " lies outside an input plane of " + std::to_string(plane_size) +
                            " elements; pass the indices max_pool2d_with_indices returned");
  }
  launch_pool2d_backward(grad_output.dtype(), PoolKind::Max, image_of(grad_output),
                         image_of(indices), image_of(grad_input), window, on.launch_target());
}

void avg_pool2d_backward_grad_input(const TensorView& grad_output, const TensorView& self,
                                    std::span<const int64_t> kernel_size,
                                    std::span<const int64_t> stride,
                                    std::span<const int64_t> padding,
                                    bool /*ceil_mode: in grad_output's size*/,
                                    bool count_include_pad, std::optional<int64_t> divisor_override,
                                    const TensorView& grad_input) {
  constexpr std::string_view op = "avg_pool2d_backward";
  require_dtype(op, "grad_input", grad_input, grad_output.dtype());
  require_dtype(op, "self", self, grad_output.dtype());
  static constexpr int64_t kNoDilation[] = {1};
  SlidingWindow window =
      sliding_window(plugin::pooling_window(kernel_size, stride, padding, kNoDilation));
  window.count_include_pad = count_include_pad;
  window.divisor_override = divisor_override.value_or(0);
  const OnDevice on(grad_input);
  launch_pool2d_backward(grad_output.dtype(), PoolKind::Average, image_of(grad_output), Image{},
                         image_of(grad_input), window, on.launch_target());
}

void _adaptive_avg_pool2d_backward_out(const TensorView& grad_output, const TensorView& self,
                                       const TensorView& out) {
  constexpr std::string_view op = "_adaptive_avg_pool2d_backward";
  require_dtype(op, "out", out, grad_output.dtype());
  require_dtype(op, "self", self, grad_output.dtype());
  const OnDevice on(out);
  launch_pool2d_backward(grad_output.dtype(), PoolKind::AdaptiveAverage, image_of(grad_output),
                         Image{}, image_of(out), SlidingWindow{}, on.launch_target());
}

}  // namespace bp::cuda
