// Meta functions of the reductions. The kernel gets the dims as the caller wrote them: it wraps
// negative dims itself, and may assume they are in range and unique, and that an absent or
// empty list means every dim. All tensors are on one device; outputs are contiguous.
#include "meta_support.h"

#include <core_generated/MetaFunctions.h>

#include <fmt/format.h>

namespace bp::meta {
namespace {

using support::common_device;
using support::DimMask;
using support::reduced_shape;
using support::reduction_mask;

IntArrayRef dims_or_all(const OptionalIntArrayRef& dim) {
  return dim.has_value() ? dim.value() : IntArrayRef();
}

// The maximum of no elements is undefined, so every reduced dim needs elements.
void check_reduced_dims_nonempty(const Tensor& self, const DimMask& mask, const char* op) {
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (mask.test(d) && self.sizes()[d] == 0) {
      throw Error(
          fmt::format("{}: expected reduction dim {} to have non-zero size (the tensor's "
                      "shape is {})",
                      op, d, detail::format_shape(self.sizes())));
    }
  }
}

}  // namespace

// sum: out has the dtype argument, else self's dtype, except that integer and Bool inputs sum
// to Int64, as in PyTorch. self keeps its dtype where it widens exactly to out's (Bool into
// Int64, float16 into Float32: widens_exactly), which the kernel reads as out's dtype, so that a
// large mask is not copied to Int64 first; otherwise self is converted to out's dtype.
std::array<OutputSpec, 1> sum_like(Tensor& self, OptionalIntArrayRef dim, bool keepdim,
                                   std::optional<DType> dtype) {
  const Device device = common_device({&self});
  const DType out_dtype =
      dtype.value_or(is_integral(self.dtype(), /*include_bool=*/true) ? kInt64 : self.dtype());
  const DimMask mask = reduction_mask("sum", dims_or_all(dim), self.dim());
  DimVector shape = reduced_shape(self.sizes(), mask, keepdim);
  if (!widens_exactly(self.dtype(), out_dtype)) self = self.to(out_dtype);
  return {OutputSpec{std::move(shape), out_dtype, device}};
}

// mean: out has the dtype argument, else self's dtype; either must be floating point. self keeps
// its dtype where it widens exactly to out's, as for sum. A reduction over no elements is NaN,
// the kernel's to produce.
std::array<OutputSpec, 1> mean_like(Tensor& self, OptionalIntArrayRef dim, bool keepdim,
                                    std::optional<DType> dtype) {
  const Device device = common_device({&self});
  if (dtype && !is_floating_point(*dtype)) {
    throw Error(
        fmt::format("mean(): could not infer output dtype. Optional dtype must be a "
                    "floating point dtype. Got: {}",
                    dtype_name(*dtype)));
  }
  if (!dtype && !is_floating_point(self.dtype())) {
    throw Error(
        fmt::format("mean(): could not infer output dtype. Input dtype must be a "
                    "floating point dtype. Got: {}; convert with .to(bp::kFloat32) or "
                    "pass dtype",
                    dtype_name(self.dtype())));
  }
  const DType out_dtype = dtype.value_or(self.dtype());
  const DimMask mask = reduction_mask("mean", dims_or_all(dim), self.dim());
  DimVector shape = reduced_shape(self.sizes(), mask, keepdim);
  if (!widens_exactly(self.dtype(), out_dtype)) self = self.to(out_dtype);
  return {OutputSpec{std::move(shape), out_dtype, device}};
}

// amax: out has self's dtype (any, integers and Bool included); every reduced dim is non-empty.
std::array<OutputSpec, 1> amax_out(Tensor& self, IntArrayRef dim, bool keepdim) {
  const Device device = common_device({&self});
  const DimMask mask = reduction_mask("amax", dim, self.dim());
  check_reduced_dims_nonempty(self, mask, "amax");
  return {OutputSpec{reduced_shape(self.sizes(), mask, keepdim), self.dtype(), device}};
}

// max.dim: values have self's dtype, indices are Int64 (the first maximum's index); the reduced
// dim is non-empty. A 0-dim self has one element at index 0.
std::array<OutputSpec, 2> max_dim_max(Tensor& self, int64_t dim, bool keepdim) {
  const Device device = common_device({&self});
  const DimMask mask = reduction_mask("max", {dim}, self.dim());
  check_reduced_dims_nonempty(self, mask, "max");
  DimVector shape = reduced_shape(self.sizes(), mask, keepdim);
  return {OutputSpec{shape, self.dtype(), device}, OutputSpec{shape, kInt64, device}};
}

// argmax: out is Int64. With a dim, as max.dim's indices; without one, the index of the first
// maximum in the flattened (row-major) tensor, in a 0-dim out, or one of all-ones shape when
// keepdim. Reduced elements are never empty.
std::array<OutputSpec, 1> argmax_out(Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  const Device device = common_device({&self});
  if (!dim) {
    if (self.numel() == 0) {
      throw Error(
          fmt::format("argmax: the tensor of shape {} has no elements; pass a dim to "
                      "reduce a non-empty one",
                      detail::format_shape(self.sizes())));
    }
    DimVector shape = keepdim ? DimVector(self.dim(), 1) : DimVector();
    return {OutputSpec{std::move(shape), kInt64, device}};
  }
  const DimMask mask = reduction_mask("argmax", {*dim}, self.dim());
  check_reduced_dims_nonempty(self, mask, "argmax");
  return {OutputSpec{reduced_shape(self.sizes(), mask, keepdim), kInt64, device}};
}

}  // namespace bp::meta
