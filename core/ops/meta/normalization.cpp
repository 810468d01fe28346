// Meta functions of softmax and layer norm. All tensors are on one device; outputs are
// contiguous.
#include "meta_support.h"

#include <core_generated/MetaFunctions.h>

#include <fmt/format.h>

namespace bp::meta {

// softmax, log_softmax: self and out have the dtype argument, else self's dtype, which must be
// floating point (PyTorch has no integer softmax; dtype=Float32 converts an integer input).
// out has self's shape. The kernel wraps dim itself; it is in range (0 or -1 for a 0-dim self).
std::array<OutputSpec, 1> softmax_like(Tensor& self, int64_t dim, std::optional<DType> dtype) {
  const Device device = support::common_device({&self});
  detail::wrap_dim(dim, self.dim());
  const DType out_dtype = dtype.value_or(self.dtype());
  if (!is_floating_point(out_dtype)) {
    throw Error(
        fmt::format("softmax and log_softmax need a floating-point dtype, got {}; pass "
                    "dtype=bp::kFloat32 to compute in floating point",
                    dtype_name(out_dtype)));
  }
  DimVector shape(self.sizes());
  if (self.dtype() != out_dtype) self = self.to(out_dtype);
  return {OutputSpec{std::move(shape), out_dtype, device}};
}

// native_layer_norm: input is floating point; weight and bias, when present, have exactly
// normalized_shape and input's dtype; input's trailing dims equal normalized_shape. Outputs:
// out with input's shape, then mean and rstd (1 / sqrt(var + eps), biased variance) with
// input's leading dims and a 1 for each normalized dim; all three have input's dtype.
std::array<OutputSpec, 3> native_layer_norm_out(Tensor& input, IntArrayRef normalized_shape,
                                                std::optional<Tensor>& weight,
                                                std::optional<Tensor>& bias,
                                                double /*eps: any value is valid*/) {
  const bool has_weight = weight && weight->defined();
  const bool has_bias = bias && bias->defined();
  const Device device = has_weight && has_bias ? support::common_device({&input, &*weight, &*bias})
                        : has_weight           ? support::common_device({&input, &*weight})
                        : has_bias             ? support::common_device({&input, &*bias})
                                               : support::common_device({&input});
  const auto normalized_rank = static_cast<int64_t>(normalized_shape.size());
  if (normalized_rank == 0) {
    throw Error(
        "native_layer_norm: expected normalized_shape to have at least one element, got "
        "[]");
  }
  const DimVector expected(normalized_shape);
  const auto check_parameter = [&](const Tensor& parameter, const char* name) {
    if (DimVector(parameter.sizes()) != expected) {
      throw Error(
          fmt::format("native_layer_norm: expected {} of the same shape as "
                      "normalized_shape {}, but got {} of shape {}",
                      name, detail::format_shape(normalized_shape), name,
                      detail::format_shape(parameter.sizes())));
    }
  };
  if (has_weight) check_parameter(*weight, "weight");
  if (has_bias) check_parameter(*bias, "bias");

  const int64_t axis = input.dim() - normalized_rank;
  if (axis < 0 ||
      DimVector(IntArrayRef(input.sizes().data() + axis, normalized_shape.size())) != expected) {
    const std::string shape = detail::format_shape(normalized_shape);
    throw Error(
        fmt::format("native_layer_norm: given normalized_shape {}, expected an input of "
                    "shape [*, {}], but got an input of shape {}",
                    shape, shape.substr(1, shape.size() - 2), detail::format_shape(input.sizes())));
  }
  if (!is_floating_point(input.dtype())) {
    throw Error(
        fmt::format("native_layer_norm: expected a floating-point input, got {}; convert "
                    "with .to(bp::kFloat32)",
                    dtype_name(input.dtype())));
  }
  const DType dtype = input.dtype();
  if (has_weight && weight->dtype() != dtype) *weight = weight->to(dtype);
  if (has_bias && bias->dtype() != dtype) *bias = bias->to(dtype);

  DimVector stats_shape(input.sizes());
  for (int64_t d = axis; d < input.dim(); ++d) stats_shape[d] = 1;
  return {OutputSpec{DimVector(input.sizes()), dtype, device},
          OutputSpec{stats_shape, dtype, device}, OutputSpec{stats_shape, dtype, device}};
}

}  // namespace bp::meta
