// conv2d, max_pool2d, avg_pool2d and adaptive_avg_pool2d (kernels/spatial.cl) over
// (N, C, H, W) tensors of any strides: one work-item per output element, or per block of
// outputs (conv2d_rows). Pooling windows are laid out on the host by the SDK's
// pooling_axis and adaptive_axis, the CPU backend's own tables, and handed to the kernel in one
// small buffer. Floating dtypes only, as in the CPU backend.
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

// out[n, c, y, x] = the max, or the average, of input's window (rows[y], cols[x]).
void pool(std::string_view op, const TensorView& input, const TensorView& out,
          const plugin::PoolAxis& rows, const plugin::PoolAxis& cols, bool average,
          std::optional<int64_t> divisor_override) {
  Device& device = device_of(out);
  // first, count and divisor for every output row, then for every output column.
  std::vector<int64_t> axes;
  for (const plugin::PoolAxis* axis : {&rows, &cols}) {
    for (const std::vector<int64_t>* table : {&axis->first, &axis->count, &axis->divisor}) {
      axes.insert(axes.end(), table->begin(), table->end());
    }
  }
  cl_int error = CL_SUCCESS;
  // Released once the kernel that reads it has run: OpenCL keeps it until then.
  const OwnedBuffer windows(clCreateBuffer(device.context(),
                                           CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                           axes.size() * sizeof(int64_t), axes.data(), &error));
  check_cl(error, "uploading the pooling windows of " + std::string(op) + " to " + device.label());
  KernelArgs args;
  args.add(buffer_of(out)).add(four(out.sizes())).add(four(out.strides()));
  args.add(buffer_of(input))
      .add(four(input.strides()))
      .add(windows.get())
      .add(two({rows.step, cols.step}))
      .add(cl_int{average})
      .add(cl_long{divisor_override.value_or(0)});
  // A work-item per output column, row and channel (kernels/spatial.cl), in work-groups along
  // the columns.
  const auto columns = static_cast<size_t>(out.size(3));
  const size_t width = std::min(device.work_group_size(), std::bit_ceil(columns));
  WorkSize work;
  work.dims = 3;
  work.local = {width, 1, 1};
  work.global = {blocks_covering(out.size(3), static_cast<int64_t>(width)) * width,
                 static_cast<size_t>(out.size(2)), static_cast<size_t>(out.size(1))};
  launch(device, device.program(KernelSource::Spatial, out.dtype()), "pool2d", args, work);
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

}  // namespace bp::opencl
