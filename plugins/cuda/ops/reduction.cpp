// Reductions over any dimensions and strides (kernels/reduce.cu): sum and mean, and the maximum
// with its position (amax, max.dim, argmax).
#include "CUDANativeFunctions.h"

#include "runtime/converted_copy.h"
#include "runtime/tensor_access.h"

#include <optional>
#include <span>
#include <string>

namespace bp::cuda {
namespace {

// sum and mean into out. The meta step has given self out's dtype, or one that widens exactly to
// it: the kernels read one dtype, so such a self is converted first.
void sum_into(std::string_view op, const TensorView& self, const DimValues<bool>& reduced,
              bool keepdim, const TensorView& out, bool average) {
  require_widening_dtype(op, "self", self, out.dtype());
  const OnDevice on(out);
  Device& device = on.device();
  if (self.dtype() != out.dtype()) {
    const ConvertedCopy converted(device, self, out.dtype());
    sum_into(op, converted.view(), reduced, keepdim, out, average);
    return;
  }
  const DimValues<int64_t> out_strides = reduced_output_strides(out, reduced, keepdim);
  const GroupShape<2> shape =
      group_shape<2>(op, self.sizes(), reduced, {self.strides(), out_strides.span()});
  DeviceScratch scratch(device);
  launch_sum(out.dtype(), shape, address_of(self), address_of(out), average, device.launch_target(),
             scratch);
}

// The largest member of each group and its position (the first one; NaN above everything, as in
// PyTorch). Either output may be absent. Kernel: the op's kernel_dtypes type.
template <typename Kernel>
void max_into(std::string_view op, const TensorView& self, const DimValues<bool>& reduced,
              bool keepdim, const TensorView* values, const TensorView* indices) {
  if (values) require_dtype(op, "values", *values, self.dtype());
  if (indices) require_dtype(op, "indices", *indices, DType::Int64);
  const DimValues<int64_t> no_strides(reduced.size(), 0);  // an absent output is not written
  const DimValues<int64_t> value_strides =
      values ? reduced_output_strides(*values, reduced, keepdim) : no_strides;
  const DimValues<int64_t> index_strides =
      indices ? reduced_output_strides(*indices, reduced, keepdim) : no_strides;
  const GroupShape<3> shape = group_shape<3>(
      op, self.sizes(), reduced, {self.strides(), value_strides.span(), index_strides.span()});
  // PyTorch refuses max-like reductions over nothing, even when the output is empty too.
  if (shape.group_size == 0) {
    throw plugin::Error(BP_STATUS_INVALID_ARGUMENT,
                        std::string(op) + "(): cannot reduce over a zero-size dimension");
  }
  const OnDevice on(self);
  Device& device = on.device();
  DeviceScratch scratch(device);
  launch_max<Kernel>(self.dtype(), shape, address_of(self), values ? address_of(*values) : nullptr,
                     indices ? reinterpret_cast<int64_t*>(address_of(*indices)) : nullptr,
                     device.launch_target(), scratch);
}

}  // namespace

void sum_IntList_out(const TensorView& self, std::optional<std::span<const int64_t>> dim,
                     bool keepdim, std::optional<DType> /*dtype: out already has it*/,
                     const TensorView& out) {
  sum_into("sum", self, reduced_dims("sum", self.dim(), dim), keepdim, out,
           /*average=*/false);
}

void mean_out(const TensorView& self, std::optional<std::span<const int64_t>> dim, bool keepdim,
              std::optional<DType> /*dtype: out already has it*/, const TensorView& out) {
  sum_into("mean", self, reduced_dims("mean", self.dim(), dim), keepdim, out,
           /*average=*/true);
}

void amax_out(const TensorView& self, std::span<const int64_t> dim, bool keepdim,
              const TensorView& out) {
  max_into<kernel_dtypes::amax_out>("amax", self, reduced_dims("amax", self.dim(), dim), keepdim,
                                    &out, nullptr);
}

// PyTorch names max.dim's outputs `max` (the values) and `max_values` (the indices).
void max_dim_max(const TensorView& self, int64_t dim, bool keepdim, const TensorView& max,
                 const TensorView& max_values) {
  max_into<kernel_dtypes::max_dim_max>("max", self, single_reduced_dim("max", self.dim(), dim),
                                       keepdim, &max, &max_values);
}

// Without a dim, the index is into the flattened input.
void argmax_out(const TensorView& self, std::optional<int64_t> dim, bool keepdim,
                const TensorView& out) {
  const DimValues<bool> reduced = single_reduced_dim_or_all("argmax", self.dim(), dim);
  max_into<kernel_dtypes::argmax_out>("argmax", self, reduced, keepdim, nullptr, &out);
}

}  // namespace bp::cuda
