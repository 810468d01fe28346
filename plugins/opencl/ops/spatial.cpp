// conv2d, max_pool2d, avg_pool2d and adaptive_avg_pool2d (kernels/spatial.cl) over
// (N, C, H, W) tensors of any strides: one work-item per output element, or per block of
// outputs (conv2d_rows). Pooling windows are laid out on the host by the SDK's
// pooling_axis and adaptive_axis, the CPU backend's own tables, and handed to the kernel in one
// small buffer. Their gradients (convolution_backward, max_pool2d_with_indices_backward,
// avg_pool2d_backward, _adaptive_avg_pool2d_backward) give each element they write a work-item
// that gathers its sum, so no two add to one element: pooling's through the SDK's
// covering_windows, the outputs whose windows may take each input row and column. Floating
// dtypes only, as in the CPU backend.
#include "OpenCLNativeFunctions.h"

#include "runtime/cl_call.h"
#include "runtime/kernel_launch.h"

#include <backplane/sdk/window2d.hpp>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace bp::opencl {
namespace {

// CONV_CHANNELS and CONV_COLUMNS in kernels/spatial.cl: the output channels and columns of one
// work-item of conv2d_rows.
constexpr int64_t kConvChannels = 8;
constexpr int64_t kConvColumns = 32;

cl_long4 four(std::span<const int64_t> values) {
  cl_long4 v{};
  for (size_t d = 0; d < 4; ++d) v.s[d] = values[d];
  return v;
}

cl_long2 two(const plugin::Pair& pair) {
  cl_long2 v{};
  v.s[0] = pair[0];
  v.s[1] = pair[1];
  return v;
}

// The kernels' leading arguments: element count, then out as buffer, base, sizes and strides.
KernelArgs output_args(const TensorView& out) {
  KernelArgs args;
  args.add(out.numel()).add(buffer_of(out)).add(four(out.sizes())).add(four(out.strides()));
  return args;
}

void check_images(std::string_view op, Device& device, const TensorView& input,
                  const TensorView& out) {
  require_dtype(op, "out", out, input.dtype());
  device.require_double_precision_for(op, input.dtype());
  plugin::check(input.dim() == 4 && out.dim() == 4,
                std::string(op) + ": the OpenCL kernel takes (N, C, H, W) tensors");
}

// A pooling op's windows, first, count and divisor for every output row, then for every output
// column, as a table on the device.
OwnedBuffer window_table(Device& device, std::string_view op, const plugin::PoolAxis& rows,
                         const plugin::PoolAxis& cols) {
  std::vector<int64_t> axes;
  for (const plugin::PoolAxis* axis : {&rows, &cols}) {
    for (const std::vector<int64_t>* table : {&axis->first, &axis->count, &axis->divisor}) {
      axes.insert(axes.end(), table->begin(), table->end());
    }
  }
  return upload_table(device, axes, "the pooling windows of " + std::string(op));
}

// A work-item per column, row and channel of `out` (kernels/spatial.cl), in work-groups along the
// columns.
WorkSize pooling_work(const Device& device, const TensorView& out) {
  const auto columns = static_cast<size_t>(out.size(3));
  const size_t width = std::min(device.work_group_size(), std::bit_ceil(columns));
  WorkSize work;
  work.dims = 3;
  work.local = {width, 1, 1};
  work.global = {blocks_covering(out.size(3), static_cast<int64_t>(width)) * width,
                 static_cast<size_t>(out.size(2)), static_cast<size_t>(out.size(1))};
  return work;
}

// out[n, c, y, x] = the max, or the average, of input's window (rows[y], cols[x]); with
// `indices`, each maximum's flat index in its input plane too.
void pool(std::string_view op, const TensorView& input, const TensorView& out,
          const plugin::PoolAxis& rows, const plugin::PoolAxis& cols, bool average,
          std::optional<int64_t> divisor_override, const TensorView* indices = nullptr) {
  Device& device = device_of(out);
  // Released once the kernel that reads it has run: OpenCL keeps it until then.
  const OwnedBuffer windows = window_table(device, op, rows, cols);
  KernelArgs args;
  args.add(buffer_of(out)).add(four(out.sizes())).add(four(out.strides()));
  args.add(buffer_of(input))
      .add(four(input.strides()))
      .add(windows.get())
      .add(two({rows.step, cols.step}))
      .add(cl_int{average})
      .add(cl_long{divisor_override.value_or(0)});
  // Without indices, out stands in for them; they are not written.
  const TensorView& index_view = indices ? *indices : out;
  args.add(Buffer{buffer_of(index_view).mem, indices ? buffer_of(*indices).base : 0})
      .add(four(index_view.strides()))
      .add(cl_int{indices != nullptr})
      .add(input.size(3));
  launch(device, device.program(KernelSource::Spatial, out.dtype()), "pool2d", args,
         pooling_work(device, out));
}

// grad_input[n, c, y, x] = the sum of grad_output over the outputs whose windows (rows, cols)
// take (y, x): for a maximum, those whose index is (y, x)'s.
void pool_backward(std::string_view op, const TensorView& grad_output, const TensorView& grad_input,
                   const plugin::PoolAxis& rows, const plugin::PoolAxis& cols, bool average,
                   std::optional<int64_t> divisor_override, const TensorView* indices = nullptr) {
  Device& device = device_of(grad_input);
  const OwnedBuffer windows = window_table(device, op, rows, cols);
  std::vector<int64_t> reach;
  for (const auto& [axis, size] :
       {std::pair{&rows, grad_input.size(2)}, std::pair{&cols, grad_input.size(3)}}) {
    const plugin::CoveringWindows covering = plugin::covering_windows(*axis, size);
    reach.insert(reach.end(), covering.first.begin(), covering.first.end());
    reach.insert(reach.end(), covering.count.begin(), covering.count.end());
  }
  const OwnedBuffer covering =
      upload_table(device, reach, "the windows over the input of " + std::string(op));
  // Without indices, grad_output's buffer stands in for them; they are not read.
  const TensorView& index_view = indices ? *indices : grad_output;
  KernelArgs args;
  args.add(buffer_of(grad_input)).add(four(grad_input.sizes())).add(four(grad_input.strides()));
  args.add(buffer_of(grad_output))
      .add(four(grad_output.sizes()))
      .add(four(grad_output.strides()))
      .add(Buffer{buffer_of(index_view).mem, indices ? buffer_of(*indices).base : 0})
      .add(four(index_view.strides()))
      .add(windows.get())
      .add(covering.get())
      .add(two({rows.step, cols.step}))
      .add(cl_int{average})
      .add(cl_long{divisor_override.value_or(0)});
  launch(device, device.program(KernelSource::Spatial, grad_input.dtype()), "pool2d_backward", args,
         pooling_work(device, grad_input));
}

}  // namespace

void conv2d_out(const TensorView& input, const TensorView& weight, const TensorView* bias,
                std::span<const int64_t> stride, std::span<const int64_t> padding,
                std::span<const int64_t> dilation, int64_t groups, const TensorView& out) {
  constexpr std::string_view op = "conv2d";
  plugin::require_dtype_of<plugin::kernel_dtypes::conv2d_out>(out.dtype());
  Device& device = device_of(out);
  check_images(op, device, input, out);
  require_dtype(op, "weight", weight, input.dtype());
  if (bias) require_dtype(op, "bias", *bias, input.dtype());
  if (out.numel() == 0) return;
  const int64_t out_per_group = out.size(1) / groups;
  KernelArgs operands;
  operands.add(buffer_of(input)).add(four(input.sizes())).add(four(input.strides()));
  operands.add(buffer_of(weight)).add(four(weight.sizes())).add(four(weight.strides()));
  operands.add(bias ? buffer_of(*bias) : buffer_of(input))
      .add(bias ? bias->stride(0) : int64_t{0})
      .add(cl_int{bias != nullptr})
      .add(two(plugin::expand_pair(stride, {1, 1})))
      .add(two(plugin::expand_pair(padding, {0, 0})))
      .add(two(plugin::expand_pair(dilation, {1, 1})))
      .add(out_per_group);
  const cl_program program = device.program(KernelSource::Spatial, out.dtype());
  if (device.kernel_shape() == KernelShape::Gpu) {
    launch(device, program, "conv2d", output_args(out).append(operands),
           elementwise_work(device, out.numel()));
    return;
  }
  // conv2d_rows: a work-item per block of output columns, output row, and block of output
  // channels of one group of one image, in work-groups of one (see kernels/spatial.cl).
  KernelArgs args;
  args.add(buffer_of(out)).add(four(out.sizes())).add(four(out.strides())).append(operands);
  WorkSize work;
  work.dims = 3;
  work.global = {
      blocks_covering(out.size(3), kConvColumns), static_cast<size_t>(out.size(2)),
      static_cast<size_t>(out.size(0) * groups) * blocks_covering(out_per_group, kConvChannels)};
  launch(device, program, "conv2d_rows", args, work);
}

void max_pool2d_out(const TensorView& self, std::span<const int64_t> kernel_size,
                    std::span<const int64_t> stride, std::span<const int64_t> padding,
                    std::span<const int64_t> dilation,
                    bool /*ceil_mode: out's size says whether the meta step added a window*/,
                    const TensorView& out) {
  constexpr std::string_view op = "max_pool2d";
  plugin::require_dtype_of<plugin::kernel_dtypes::max_pool2d_out>(out.dtype());
  check_images(op, device_of(out), self, out);
  if (out.numel() == 0) return;
  const plugin::Window2d w = plugin::pooling_window(kernel_size, stride, padding, dilation);
  pool(op, self, out, plugin::pooling_axis(w, 0, self.size(2), out.size(2), false),
       plugin::pooling_axis(w, 1, self.size(3), out.size(3), false), /*average=*/false,
       std::nullopt);
}

void avg_pool2d_out(const TensorView& self, std::span<const int64_t> kernel_size,
                    std::span<const int64_t> stride, std::span<const int64_t> padding,
                    bool /*ceil_mode: as for max_pool2d*/, bool count_include_pad,
                    std::optional<int64_t> divisor_override, const TensorView& out) {
  constexpr std::string_view op = "avg_pool2d";
  plugin::require_dtype_of<plugin::kernel_dtypes::avg_pool2d_out>(out.dtype());
  check_images(op, device_of(out), self, out);
  if (out.numel() == 0) return;
  const plugin::Window2d w = plugin::pooling_window(kernel_size, stride, padding, {});
  pool(op, self, out, plugin::pooling_axis(w, 0, self.size(2), out.size(2), count_include_pad),
       plugin::pooling_axis(w, 1, self.size(3), out.size(3), count_include_pad), /*average=*/true,
       divisor_override);
}

void adaptive_avg_pool2d_out(const TensorView& self,
                             std::span<const int64_t> /*output_size: out's size*/,
                             const TensorView& out) {
  constexpr std::string_view op = "adaptive_avg_pool2d";
  plugin::require_dtype_of<plugin::kernel_dtypes::adaptive_avg_pool2d_out>(out.dtype());
  check_images(op, device_of(out), self, out);
  if (out.numel() == 0) return;
  pool(op, self, out, plugin::adaptive_axis(self.size(2), out.size(2)),
       plugin::adaptive_axis(self.size(3), out.size(3)), /*average=*/true, std::nullopt);
}

// grad_input through conv2d_backward_input and grad_weight through conv2d_backward_weight, a
// work-item per element of each; grad_bias, grad_output summed over N, H and W, through sum.
void convolution_backward_out(const TensorView& grad_output, const TensorView& input,
                              const TensorView& weight, std::span<const int64_t> stride,
                              std::span<const int64_t> padding, std::span<const int64_t> dilation,
                              int64_t groups, const TensorView& out0, const TensorView& out1,
                              const TensorView& out2) {
  constexpr std::string_view op = "convolution_backward";
  plugin::require_dtype_of<plugin::kernel_dtypes::convolution_backward_out>(grad_output.dtype());
  Device& device = device_of(out0);
  check_images(op, device, input, grad_output);
  check_images(op, device, input, out0);
  plugin::require_dtypes(op, {{"weight", &weight}, {"outputs", &out1}, {"outputs", &out2}},
                         input.dtype());
  const int64_t out_per_group = grad_output.size(1) / groups;
  KernelArgs window;
  window.add(two(plugin::expand_pair(stride, {1, 1})))
      .add(two(plugin::expand_pair(padding, {0, 0})))
      .add(two(plugin::expand_pair(dilation, {1, 1})))
      .add(out_per_group);
  KernelArgs gradient;
  gradient.add(buffer_of(grad_output))
      .add(four(grad_output.sizes()))
      .add(four(grad_output.strides()));
  const cl_program program = device.program(KernelSource::Spatial, input.dtype());
  if (out0.numel() > 0) {
    KernelArgs args = output_args(out0).append(gradient);
    args.add(buffer_of(weight)).add(four(weight.sizes())).add(four(weight.strides()));
    launch(device, program, "conv2d_backward_input", args.append(window),
           elementwise_work(device, out0.numel()));
  }
  if (out1.numel() > 0) {
    KernelArgs args = output_args(out1).append(gradient);
    args.add(buffer_of(input)).add(four(input.sizes())).add(four(input.strides()));
    launch(device, program, "conv2d_backward_weight", args.append(window),
           elementwise_work(device, out1.numel()));
  }
  const int64_t images_and_positions[] = {0, 2, 3};
  sum_IntList_out(grad_output, images_and_positions, /*keepdim=*/false, std::nullopt, out2);
}

void max_pool2d_with_indices_out(const TensorView& self, std::span<const int64_t> kernel_size,
                                 std::span<const int64_t> stride, std::span<const int64_t> padding,
                                 std::span<const int64_t> dilation,
                                 bool /*ceil_mode: as for max_pool2d*/, const TensorView& out,
                                 const TensorView& indices) {
  constexpr std::string_view op = "max_pool2d_with_indices";
  plugin::require_dtype_of<plugin::kernel_dtypes::max_pool2d_with_indices_out>(out.dtype());
  check_images(op, device_of(out), self, out);
  require_dtype(op, "indices", indices, DType::Int64);
  if (out.numel() == 0) return;
  const plugin::Window2d w = plugin::pooling_window(kernel_size, stride, padding, dilation);
  pool(op, self, out, plugin::pooling_axis(w, 0, self.size(2), out.size(2), false),
       plugin::pooling_axis(w, 1, self.size(3), out.size(3), false), /*average=*/false,
       std::nullopt, &indices);
}

// Each input element sums the gradients of the outputs whose index names it. The indices are read
// back and checked on the host first, so that one outside its plane is the CPU backend's error
// (this waits for the device); one inside the plane but outside its output's window, which
// max_pool2d_with_indices never gives, adds nothing.
void max_pool2d_with_indices_backward_grad_input(
    const TensorView& grad_output, const TensorView& self, std::span<const int64_t> kernel_size,
    std::span<const int64_t> stride, std::span<const int64_t> padding,
    std::span<const int64_t> dilation, bool /*ceil_mode: grad_output's size says*/,
    const TensorView& indices, const TensorView& grad_input) {
  constexpr std::string_view op = "max_pool2d_with_indices_backward";
  plugin::require_dtype_of<plugin::kernel_dtypes::max_pool2d_with_indices_backward_grad_input>(
      grad_input.dtype());
  check_images(op, device_of(grad_input), grad_output, grad_input);
  require_dtype(op, "self", self, grad_input.dtype());
  require_dtype(op, "indices", indices, DType::Int64);
  if (grad_input.numel() == 0) return;
  const int64_t plane = grad_input.size(2) * grad_input.size(3);
  for (const int64_t index : read_int64_elements(indices, "the indices of " + std::string(op))) {
    plugin::check(index >= 0 && index < plane,
                  std::string(op) + ": index " + std::to_string(index) +
                      " lies outside an input plane of " + std::to_string(plane) +
                      " elements; pass the indices max_pool2d_with_indices returned");
  }
  const plugin::Window2d w = plugin::pooling_window(kernel_size, stride, padding, dilation);
  pool_backward(op, grad_output, grad_input,
                plugin::pooling_axis(w, 0, self.size(2), grad_output.size(2), false),
                plugin::pooling_axis(w, 1, self.size(3), grad_output.size(3), false),
                /*average=*/false, std::nullopt, &indices);
}

void avg_pool2d_backward_grad_input(const TensorView& grad_output, const TensorView& self,
                                    std::span<const int64_t> kernel_size,
                                    std::span<const int64_t> stride,
                                    std::span<const int64_t> padding,
                                    bool /*ceil_mode: grad_output's size says*/,
                                    bool count_include_pad, std::optional<int64_t> divisor_override,
                                    const TensorView& grad_input) {
  constexpr std::string_view op = "avg_pool2d_backward";
  plugin::require_dtype_of<plugin::kernel_dtypes::avg_pool2d_backward_grad_input>(
      grad_input.dtype());
  check_images(op, device_of(grad_input), grad_output, grad_input);
  require_dtype(op, "self", self, grad_input.dtype());
  if (grad_input.numel() == 0) return;
  const plugin::Window2d w = plugin::pooling_window(kernel_size, stride, padding, {});
  pool_backward(op, grad_output, grad_input,
                plugin::pooling_axis(w, 0, self.size(2), grad_output.size(2), count_include_pad),
                plugin::pooling_axis(w, 1, self.size(3), grad_output.size(3), count_include_pad),
                /*average=*/true, divisor_override);
}

void _adaptive_avg_pool2d_backward_out(const TensorView& grad_output, const TensorView& self,
                                       const TensorView& out) {
  constexpr std::string_view op = "_adaptive_avg_pool2d_backward";
  plugin::require_dtype_of<plugin::kernel_dtypes::_adaptive_avg_pool2d_backward_out>(out.dtype());
  check_images(op, device_of(out), grad_output, out);
  require_dtype(op, "self", self, out.dtype());
  if (out.numel() == 0) return;
  pool_backward(op, grad_output, out, plugin::adaptive_axis(self.size(2), grad_output.size(2)),
                plugin::adaptive_axis(self.size(3), grad_output.size(3)), /*average=*/true,
                std::nullopt);
}

}  // namespace bp::opencl
