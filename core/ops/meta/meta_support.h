// What the meta functions share: device agreement, preparing inputs for a kernel, and the
// dims and shapes of reductions. Broadcasting and dim wrapping live in tensor/shape.h, type
// promotion in tensor/type_promotion.h.
#pragma once

#include "dispatch/out_arg.h"
#include "tensor/shape.h"
#include "tensor/type_promotion.h"

#include <backplane/tensor.h>

#include <bitset>
#include <initializer_list>
#include <span>
#include <string_view>

namespace bp::meta::support {

// An undefined tensor (a default-constructed bp::Tensor) as an argument is a bp::Error.
void check_defined(const Tensor& t);

// A bp::Error, as PyTorch's fill_ raises, when `value` lies outside what `dtype` holds: an
// integer dtype's range (NaN and infinities included), or a floating dtype's largest finite
// value (infinities and NaN themselves fit). Fractions are truncated and fit; Bool takes
// anything.
void check_scalar_fits(std::string_view op, const Scalar& value, DType dtype);

// The device every tensor is on; tensors on two devices are a bp::Error naming both, and an
// undefined tensor is a bp::Error too. A null pointer is an absent optional (see present()),
// which takes no part. Wrapped numbers (see
// TensorImpl::is_wrapped_number) stay on the host until prepare_input places them, so they
// take no part, as PyTorch lets a CPU scalar join a CUDA tensor.
Device common_device(std::initializer_list<const Tensor*> tensors);
Device common_device(std::span<const Tensor> tensors);
// As common_device for an elementwise op, where a 0-dim host tensor also joins tensors on
// another device, as PyTorch lets a CPU scalar tensor join CUDA tensors there; prepare_input
// then moves it (one element) to that device.
Device elementwise_device(std::initializer_list<const Tensor*> tensors);

// The tensor a `Tensor?` argument holds, or nullptr for None (or an undefined tensor, which
// PyTorch's C++ API treats as None too).
inline Tensor* present(std::optional<Tensor>& t) { return t && t->defined() ? &*t : nullptr; }

// Indices (`name`, e.g. "index") reach kernels as Int64: an Int32 tensor is converted, other
// dtypes are a bp::Error.
void prepare_indices(std::string_view op, const char* name, Tensor& indices);

// `what` (e.g. "conv2d: weight") must have `dtype`; the message names both dtypes and the
// conversion to make.
void check_same_dtype(const Tensor& t, DType dtype, std::string_view what);

// True when both tensors are defined, neither is a wrapped number, and they share one device,
// one dtype and one shape. Device agreement, type promotion and broadcasting then change
// nothing, and a meta function that computes in that dtype may skip them: the common case,
// kept cheap.
inline bool alike(const Tensor& a, const Tensor& b) {
  if (!a.defined() || !b.defined()) return false;
  const TensorImpl& x = *a.impl();
  const TensorImpl& y = *b.impl();
  if (x.is_wrapped_number() || y.is_wrapped_number() || x.dtype() != y.dtype() ||
      x.device() != y.device()) {
    return false;
  }
  const IntArrayRef x_sizes = x.sizes();
  const IntArrayRef y_sizes = y.sizes();
  if (x_sizes.size() != y_sizes.size()) return false;
  // Ranks are small: a loop beats a call to memcmp.
  for (size_t d = 0; d < x_sizes.size(); ++d) {
    if (x_sizes[d] != y_sizes[d]) return false;
  }
  return true;
}

// The shape all of `tensors` broadcast to.
DimVector broadcast_shape(std::initializer_list<const Tensor*> tensors);

// Converts `t` to `dtype` (a copy when it differs), moves a wrapped number to `device`, and
// expands `t` to `shape` (a view with stride 0 along broadcast dims), so that a kernel reads it
// like its output.
void prepare_input(Tensor& t, DType dtype, IntArrayRef shape, Device device);

// Bit d is set when a reduction reduces dim d.
using DimMask = std::bitset<64>;

// The dims `dims` names in a tensor of rank `rank`; an empty list means every dim. Dims wrap
// as PyTorch's do (a 0-dim tensor accepts 0 and -1); repeats are a bp::Error.
DimMask reduction_mask(std::string_view op, IntArrayRef dims, int64_t rank);

// `sizes` with the dims in `mask` removed, or kept as 1 when `keepdim`.
DimVector reduced_shape(IntArrayRef sizes, const DimMask& mask, bool keepdim);

}  // namespace bp::meta::support
