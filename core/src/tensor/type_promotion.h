// PyTorch's type promotion: which dtype an op computes in when its inputs' dtypes differ.
#pragma once

#include <backplane/tensor.h>
#include <backplane/sdk/dtype.hpp>

#include <functional>
#include <initializer_list>
#include <span>

namespace bp::detail {

// The smallest dtype both convert to without losing their category (bool < integer <
// floating), as PyTorch's promote_types. Backplane has no Int16, so UInt8 with Int8 gives Int32
// where PyTorch gives Short.
DType promote_types(DType a, DType b);

// The dtype an op over `tensors` computes in. As in PyTorch, tensors with dims outrank 0-dim
// tensors, which outrank wrapped numbers (see TensorImpl::is_wrapped_number): a lower-ranked
// participant only changes the result when it belongs to a higher category (an integer tensor
// plus 2.5 is Float; a Float16 tensor plus a Float64 0-dim tensor stays Float16). A wrapped
// floating-point number counts as Float32, PyTorch's default dtype. Undefined tensors are
// skipped.
DType result_type(std::span<const Tensor> tensors);
// For an op's own arguments (result_type({self, other})), which it need not copy.
DType result_type(std::initializer_list<std::reference_wrapper<const Tensor>> tensors);

// Whether an op may write a result of dtype `from` into an output of dtype `to` (PyTorch's
// can_cast: no floating to integer, nothing but Bool to Bool).
bool can_cast(DType from, DType to);

}  // namespace bp::detail
