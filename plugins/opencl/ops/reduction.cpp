// Reductions over any dimensions and strides (kernels/reduction.cl): sum and mean, and the
// maximum with its position (amax, max.dim, argmax).
#include "OpenCLNativeFunctions.h"

#include "kernels/copy_elements.h"
#include "runtime/kernel_launch.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace bp::opencl {
namespace {

// How the reduction kernels split each group (kernels/reduction.cl): `parts` runs of
// `part_size` consecutive members, and room for one partial result per run (8 bytes: the
// widest accumulator, value or index) when there is more than one. Releasing the buffers once
// the kernels are queued is safe: OpenCL keeps them until those kernels are done.
struct Runs {
  int64_t parts = 1;
  int64_t part_size = 0;
  OwnedBuffer partials;
  OwnedBuffer partial_indices;  // max_'s
};

// Few long groups are split until the runs give the device the work it takes to fill it (on a
// GPU, a work-group per run for max_work_groups of them; on a CPU device, a work-item per run
// for each of its work-items), in runs of at least kMinRun members; many groups, or short
// ones, are one run each.
Runs runs_for(Device& device, const GroupShape& shape, bool with_indices) {
  constexpr int64_t kMinRun = 4096;
  const auto wanted = static_cast<int64_t>(device.kernel_shape() == KernelShape::Cpu
                                               ? device.compute_units() * device.work_group_size()
                                               : device.max_work_groups());
  Runs runs;
  runs.part_size = shape.group_size();
  const int64_t parts = std::min(wanted / shape.groups(), shape.group_size() / kMinRun);
  if (parts < 2) return runs;
  runs.part_size = static_cast<int64_t>(blocks_covering(shape.group_size(), parts));
  runs.parts = static_cast<int64_t>(blocks_covering(shape.group_size(), runs.part_size));
  const auto allocate = [&] {
    const auto bytes = static_cast<size_t>(shape.groups() * runs.parts) * sizeof(int64_t);
    cl_int error = CL_SUCCESS;
    OwnedBuffer buffer(clCreateBuffer(device.context(), CL_MEM_READ_WRITE, bytes, nullptr, &error));
    check_cl(error, "allocating " + std::to_string(bytes) + " bytes of partial results on " +
                        device.label());
    return buffer;
  };
  runs.partials = allocate();
  if (with_indices) runs.partial_indices = allocate();
  return runs;
}

// The kernel arguments that say how groups are split, and where partial results go (`unused`,
// any buffer, where they go nowhere).
KernelArgs run_args(const Runs& runs, cl_mem unused) {
  KernelArgs args;
  args.add(runs.parts).add(runs.part_size);
  args.add(runs.partials.get() != nullptr ? runs.partials.get() : unused);
  return args;
}

// sum and mean into out. The meta step has given self out's dtype, or one that widens exactly
// to it: the kernels read one dtype, so such a self is converted first.
void sum_into(std::string_view op, const TensorView& self, const plugin::DimValues<bool>& reduced,
              bool keepdim, const TensorView& out, bool average) {
  require_widening_dtype(op, "self", self, out.dtype());
  if (self.dtype() != out.dtype() && self.numel() > 0) {
    const ConvertedCopy converted(op, self, out.dtype());
    sum_into(op, converted.view(), reduced, keepdim, out, average);
    return;
  }
  // An empty self of another dtype is bound but never read.
  Device& device = device_of(out);
  device.require_double_precision_for(op, out.dtype());
  const plugin::DimValues<int64_t> out_strides = reduced_output_strides(out, reduced, keepdim);
  const GroupShape shape =
      split_groups(self.sizes(), reduced, {self.strides(), out_strides.span()}, op);
  if (shape.groups() == 0) return;
  const Runs runs = runs_for(device, shape, /*with_indices=*/false);
  const Buffer output = buffer_of(out);
  const cl_program program = device.program(KernelSource::Reduction, out.dtype());
  KernelArgs args;
  args.add_group_params(shape)
      .add_grouped(buffer_of(self), shape, 0)
      .add_per_group(output, shape, 1)
      .add(cl_int{average});
  if (runs.parts == 1) {
    if (const std::optional<SideBySideLaunch> tiled =
            side_by_side_launch(device, shape, "sum_side_by_side", {0})) {
      launch(device, program, tiled->kernel.c_str(), args, tiled->work);
      return;
    }
  }
  args.append(run_args(runs, output.mem));
  launch(device, program, "sum", args,
         group_work(device, shape.groups() * runs.parts, runs.part_size));
  if (runs.parts == 1) return;
  KernelArgs combine;
  combine.add(shape.groups())
      .add(shape.kept.ndim)
      .add(shape.kept.size)
      .add(shape.group_size())
      .add_per_group(output, shape, 1)
      .add(cl_int{average})
      .add(runs.parts)
      .add(runs.partials.get());
  launch(device, program, "sum_partials", combine, elementwise_work(device, shape.groups()));
}

// The largest member of each group and its position (the first one; NaN above everything, as
// in PyTorch). Either output may be absent.
void max_into(std::string_view op, const TensorView& self, const plugin::DimValues<bool>& reduced,
              bool keepdim, const TensorView* values, const TensorView* indices) {
  Device& device = device_of(self);
  if (values) require_dtype(op, "values", *values, self.dtype());
  if (indices) require_dtype(op, "indices", *indices, DType::Int64);
  device.require_double_precision_for(op, self.dtype());
  // An absent output is not written.
  const plugin::DimValues<int64_t> no_strides(reduced.size(), 0);
  const plugin::DimValues<int64_t> value_strides =
      values ? reduced_output_strides(*values, reduced, keepdim) : no_strides;
  const plugin::DimValues<int64_t> index_strides =
      indices ? reduced_output_strides(*indices, reduced, keepdim) : no_strides;
  const GroupShape shape = split_groups(
      self.sizes(), reduced, {self.strides(), value_strides.span(), index_strides.span()}, op);
  // PyTorch refuses max-like reductions over nothing, even when the output is empty too.
  if (shape.group_size() == 0) {
    throw plugin::Error(BP_STATUS_INVALID_ARGUMENT,
                        std::string(op) + "(): cannot reduce over a zero-size dimension");
  }
  if (shape.groups() == 0) return;
  const Buffer input = buffer_of(self);
  const Runs runs = runs_for(device, shape, /*with_indices=*/true);
  const cl_program program = device.program(KernelSource::Reduction, self.dtype());
  KernelArgs outputs;
  outputs.add_per_group(values ? buffer_of(*values) : input, shape, 1)
      .add_per_group(indices ? buffer_of(*indices) : input, shape, 2)
      .add(cl_int{values != nullptr})
      .add(cl_int{indices != nullptr});
  KernelArgs args;
  args.add_group_params(shape)
      .add_grouped(input, shape, 0)
      .append(outputs)
      .append(run_args(runs, input.mem))
      .add(runs.partial_indices.get() != nullptr ? runs.partial_indices.get() : input.mem);
  launch(device, program, "max_", args,
         group_work(device, shape.groups() * runs.parts, runs.part_size));
  if (runs.parts == 1) return;
  KernelArgs combine;
  combine.add(shape.groups())
      .add(shape.kept.ndim)
      .add(shape.kept.size)
      .append(outputs)
      .add(runs.parts)
      .add(runs.partials.get())
      .add(runs.partial_indices.get());
  launch(device, program, "max_partials", combine, elementwise_work(device, shape.groups()));
}

}  // namespace

void sum_IntList_out(const TensorView& self, std::optional<std::span<const int64_t>> dim,
                     bool keepdim, std::optional<DType> /*dtype: out already has it*/,
                     const TensorView& out) {
  plugin::require_dtype_of<plugin::kernel_dtypes::sum_IntList_out>(out.dtype());
  sum_into("sum", self, reduced_dims("sum", self.dim(), dim), keepdim, out, /*average=*/false);
}

void mean_out(const TensorView& self, std::optional<std::span<const int64_t>> dim, bool keepdim,
              std::optional<DType> /*dtype: out already has it*/, const TensorView& out) {
  plugin::require_dtype_of<plugin::kernel_dtypes::mean_out>(out.dtype());
  sum_into("mean", self, reduced_dims("mean", self.dim(), dim), keepdim, out, /*average=*/true);
}

void amax_out(const TensorView& self, std::span<const int64_t> dim, bool keepdim,
              const TensorView& out) {
  plugin::require_dtype_of<plugin::kernel_dtypes::amax_out>(out.dtype());
  max_into("amax", self, reduced_dims("amax", self.dim(), dim), keepdim, &out, nullptr);
}

// PyTorch names max.dim's outputs `max` (the values) and `max_values` (the indices).
void max_dim_max(const TensorView& self, int64_t dim, bool keepdim, const TensorView& max,
                 const TensorView& max_values) {
  plugin::require_dtype_of<plugin::kernel_dtypes::max_dim_max>(max.dtype());
  max_into("max", self, single_reduced_dim("max", self.dim(), dim), keepdim, &max, &max_values);
}

// Without a dim, the index is into the flattened input.
void argmax_out(const TensorView& self, std::optional<int64_t> dim, bool keepdim,
                const TensorView& out) {
  plugin::require_dtype_of<plugin::kernel_dtypes::argmax_out>(self.dtype());
  const plugin::DimValues<bool> reduced = single_reduced_dim_or_all("argmax", self.dim(), dim);
  max_into("argmax", self, reduced, keepdim, nullptr, &out);
}

}  // namespace bp::opencl
