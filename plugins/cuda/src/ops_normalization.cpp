// softmax, log_softmax and layer norm: group kernels whose groups are normalised by their own
// statistics (kernels/softmax.cu, layer_norm.cu). Floating dtypes only, as in the CPU backend.
#include "CUDANativeFunctions.h"

#include "tensor_access.h"

#include <optional>
#include <span>
#include <string>

namespace bp::cuda {
namespace {

// softmax, or log_softmax, along `dim`; the meta step has given self out's dtype.
void softmax_into(std::string_view op, const TensorView& self, int64_t dim, const TensorView& out, bool logarithm) {
  require_dtype(op, "self", self, out.dtype());
  const GroupShape<2> shape =
      group_shape<2>(op, self.sizes(), single_reduced_dim(op, self.dim(), dim), {self.strides(), out.strides()});
  launch_softmax(out.dtype(), shape, address_of(self), address_of(out), logarithm, device_of(out).launch_target());
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
                           const TensorView* weight, const TensorView* bias, double eps, const TensorView& out0,
                           const TensorView& out1, const TensorView& out2) {
  constexpr std::string_view op = "native_layer_norm";
  const int64_t ndim = input.dim();
  const auto normalized_dims = static_cast<int64_t>(normalized_shape.size());
  plugin::check(normalized_dims <= ndim, std::string(op) + ": normalized_shape has more dimensions than the input");
  for (const TensorView* output : {&out0, &out1, &out2}) require_dtype(op, "outputs", *output, input.dtype());
  if (weight) require_dtype(op, "weight", *weight, input.dtype());
  if (bias) require_dtype(op, "bias", *bias, input.dtype());

  DimValues<bool> normalized(static_cast<size_t>(ndim), false);
  for (int64_t d = ndim - normalized_dims; d < ndim; ++d) normalized[static_cast<size_t>(d)] = true;
  const DimValues<int64_t> mean_strides = reduced_output_strides(out1, normalized, /*keepdim=*/true);
  const DimValues<int64_t> rstd_strides = reduced_output_strides(out2, normalized, /*keepdim=*/true);
  // An absent weight or bias is not read; zero strides stand in for it.
  const DimValues<int64_t> unused(static_cast<size_t>(ndim), 0);
  const DimValues<int64_t> weight_strides = weight ? plugin::broadcast_strides(op, *weight, input.sizes()) : unused;
  const DimValues<int64_t> bias_strides = bias ? plugin::broadcast_strides(op, *bias, input.sizes()) : unused;
  const GroupShape<kNormOperands> shape = group_shape<kNormOperands>(
      op, input.sizes(), normalized,
      {input.strides(), out0.strides(), mean_strides.span(), rstd_strides.span(), weight_strides.span(),
       bias_strides.span()});
  const void* data[kNormOperands] = {address_of(input), address_of(out0),  address_of(out1), address_of(out2),
                                     weight ? address_of(*weight) : nullptr, bias ? address_of(*bias) : nullptr};
  launch_layer_norm(input.dtype(), shape, data, eps, device_of(out0).launch_target());
}

}  // namespace bp::cuda
