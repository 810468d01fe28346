// softmax, log_softmax and layer norm (kernels/normalization.cl): group kernels whose groups
// are normalised by their own statistics. Floating dtypes only, as in the CPU backend.
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

// softmax, or log_softmax, along `dim`; the meta step has given self out's dtype.
void softmax_into(std::string_view op, const TensorView& self, int64_t dim, const TensorView& out,
                  bool logarithm) {
  Device& device = device_of(out);
  require_dtype(op, "self", self, out.dtype());
  require_supported(device, op, out.dtype(), DTypes::Floating);
  const GroupShape shape = split_groups(self.sizes(), single_reduced_dim(op, self.dim(), dim),
                                        {self.strides(), out.strides()}, op);
  if (shape.groups() == 0 || shape.group_size() == 0) return;
  KernelArgs args;
  args.add_group_params(shape)
      .add_grouped(buffer_of(self), shape, 0)
      .add_grouped(buffer_of(out), shape, 1)
      .add(cl_int{logarithm});
  launch(device, device.program(KernelSource::Normalization, out.dtype()), "softmax", args,
         group_work(device, shape));
}

}  // namespace

void softmax_int_out(const TensorView& self, int64_t dim, std::optional<DType> /*dtype: out has it*/,
                     const TensorView& out) {
  softmax_into("softmax", self, dim, out, /*logarithm=*/false);
}

void log_softmax_int_out(const TensorView& self, int64_t dim, std::optional<DType> /*dtype: out has it*/,
                         const TensorView& out) {
  softmax_into("log_softmax", self, dim, out, /*logarithm=*/true);
}

// Each group is one index of the leading dimensions; its members span the trailing
// `normalized_shape`. The meta step has given weight, bias and the three outputs input's dtype;
// out1 (mean) and out2 (rstd) keep the normalised dimensions as size 1.
void native_layer_norm_out(const TensorView& input, std::span<const int64_t> normalized_shape,
                           const TensorView* weight, const TensorView* bias, double eps,
                           const TensorView& out0, const TensorView& out1, const TensorView& out2) {
  constexpr std::string_view op = "native_layer_norm";
  Device& device = device_of(out0);
  const int64_t ndim = input.dim();
  const auto normalized_dims = static_cast<int64_t>(normalized_shape.size());
  plugin::check(normalized_dims <= ndim,
                std::string(op) + ": normalized_shape has more dimensions than the input");
  for (const TensorView* output : {&out0, &out1, &out2}) require_dtype(op, "outputs", *output, input.dtype());
  if (weight) require_dtype(op, "weight", *weight, input.dtype());
  if (bias) require_dtype(op, "bias", *bias, input.dtype());
  require_supported(device, op, input.dtype(), DTypes::Floating);

  plugin::DimValues<bool> normalized(static_cast<size_t>(ndim), false);
  for (int64_t d = ndim - normalized_dims; d < ndim; ++d) normalized[static_cast<size_t>(d)] = true;
  const plugin::DimValues<int64_t> mean_strides = reduced_output_strides(out1, normalized, /*keepdim=*/true);
  const plugin::DimValues<int64_t> rstd_strides = reduced_output_strides(out2, normalized, /*keepdim=*/true);
  // An absent weight or bias is not read; zero strides stand in for it.
  const plugin::DimValues<int64_t> unused(static_cast<size_t>(ndim), 0);
  const auto weight_strides = weight ? plugin::broadcast_strides(op, *weight, input.sizes()) : unused;
  const auto bias_strides = bias ? plugin::broadcast_strides(op, *bias, input.sizes()) : unused;
  enum LayerNormOperand : size_t { kInput, kOut, kMean, kRstd, kWeight, kBias };
  const GroupShape shape = split_groups(
      input.sizes(), normalized,
      {input.strides(), out0.strides(), mean_strides.span(), rstd_strides.span(), weight_strides.span(),
       bias_strides.span()}, op);
  if (shape.groups() == 0) return;

  const Buffer in = buffer_of(input);
  KernelArgs args;
  args.add_group_params(shape)
      .add_grouped(in, shape, kInput)
      .add_grouped(buffer_of(out0), shape, kOut)
      .add_per_group(buffer_of(out1), shape, kMean)
      .add_per_group(buffer_of(out2), shape, kRstd)
      .add_per_member(weight ? buffer_of(*weight) : in, shape, kWeight)
      .add_per_member(bias ? buffer_of(*bias) : in, shape, kBias)
      .add(cl_int{weight != nullptr})
      .add(cl_int{bias != nullptr})
      .add(accumulator_scalar(device, input.dtype(), eps));
  launch(device, device.program(KernelSource::Normalization, input.dtype()), "layer_norm", args,
         group_work(device, shape));
}

}  // namespace bp::opencl
