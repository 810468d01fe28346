// Reductions over any dimensions and strides (kernels/reduction.cl): sum and mean, and the
// maximum with its position (amax, max.dim, argmax).
#include "OpenCLNativeFunctions.h"

#include "dtype_support.h"
#include "kernel_launch.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace bp::opencl {
namespace {

// sum and mean into out, whose dtype the meta step has given self too.
void sum_into(std::string_view op, const TensorView& self, const plugin::DimValues<bool>& reduced,
              bool keepdim, const TensorView& out, bool average) {
  Device& device = device_of(out);
  require_dtype(op, "self", self, out.dtype());
  require_supported(device, op, out.dtype(), average ? DTypes::Floating : DTypes::Any);
  const plugin::DimValues<int64_t> out_strides = reduced_output_strides(out, reduced, keepdim);
  const GroupShape shape = split_groups(self.sizes(), reduced, {self.strides(), out_strides.span()}, op);
  if (shape.groups() == 0) return;
  KernelArgs args;
  args.add_group_params(shape)
      .add_grouped(buffer_of(self), shape, 0)
      .add_per_group(buffer_of(out), shape, 1)
      .add(cl_int{average});
  launch(device, device.program(KernelSource::Reduction, out.dtype()), "sum", args,
         group_work(device, shape));
}

// The largest member of each group and its position (the first one; NaN above everything, as
// in PyTorch). Either output may be absent.
void max_into(std::string_view op, const TensorView& self, const plugin::DimValues<bool>& reduced,
              bool keepdim, const TensorView* values, const TensorView* indices) {
  Device& device = device_of(self);
  if (values) require_dtype(op, "values", *values, self.dtype());
  if (indices) require_dtype(op, "indices", *indices, DType::Int64);
  require_supported(device, op, self.dtype(), DTypes::Any);
  const plugin::DimValues<int64_t> no_strides(reduced.size(), 0);  // an absent output is not written
  const plugin::DimValues<int64_t> value_strides =
      values ? reduced_output_strides(*values, reduced, keepdim) : no_strides;
  const plugin::DimValues<int64_t> index_strides =
      indices ? reduced_output_strides(*indices, reduced, keepdim) : no_strides;
  const GroupShape shape =
      split_groups(self.sizes(), reduced, {self.strides(), value_strides.span(), index_strides.span()}, op);
  // PyTorch refuses max-like reductions over nothing, even when the output is empty too.
  if (shape.group_size() == 0) {
    throw plugin::Error(BP_STATUS_INVALID_ARGUMENT,
                        std::string(op) + "(): cannot reduce over a zero-size dimension");
  }
  if (shape.groups() == 0) return;
  const Buffer input = buffer_of(self);
  KernelArgs args;
  args.add_group_params(shape)
      .add_grouped(input, shape, 0)
      .add_per_group(values ? buffer_of(*values) : input, shape, 1)
      .add_per_group(indices ? buffer_of(*indices) : input, shape, 2)
      .add(cl_int{values != nullptr})
      .add(cl_int{indices != nullptr});
  launch(device, device.program(KernelSource::Reduction, self.dtype()), "max_", args,
         group_work(device, shape));
}

}  // namespace

void sum_IntList_out(const TensorView& self, std::optional<std::span<const int64_t>> dim,
                     bool keepdim, std::optional<DType> /*dtype: out already has it*/,
                     const TensorView& out) {
  sum_into("sum", self, reduced_dims("sum", self.dim(), dim),
           keepdim, out, /*average=*/false);
}

void mean_out(const TensorView& self, std::optional<std::span<const int64_t>> dim, bool keepdim,
              std::optional<DType> /*dtype: out already has it*/, const TensorView& out) {
  sum_into("mean", self, reduced_dims("mean", self.dim(), dim),
           keepdim, out, /*average=*/true);
}

void amax_out(const TensorView& self, std::span<const int64_t> dim, bool keepdim, const TensorView& out) {
  max_into("amax", self, reduced_dims("amax", self.dim(), dim), keepdim, &out, nullptr);
}

// PyTorch names max.dim's outputs `max` (the values) and `max_values` (the indices).
void max_dim_max(const TensorView& self, int64_t dim, bool keepdim, const TensorView& max,
                 const TensorView& max_values) {
  max_into("max", self, single_reduced_dim("max", self.dim(), dim), keepdim, &max, &max_values);
}

// Without a dim, the index is into the flattened input.
void argmax_out(const TensorView& self, std::optional<int64_t> dim, bool keepdim, const TensorView& out) {
  const plugin::DimValues<bool> reduced = single_reduced_dim_or_all("argmax", self.dim(), dim);
  max_into("argmax", self, reduced, keepdim, nullptr, &out);
}

}  // namespace bp::opencl
