// Making tensors. Factories that take a device put the tensor on default_device() when none is
// given (the host unless BACKPLANE_DEFAULT_DEVICE says otherwise).
#pragma once

#include <backplane/tensor.h>

#include <cstdint>
#include <vector>

namespace bp {

Tensor empty(IntArrayRef sizes, DType dtype = kFloat32, Device device = default_device());
// Strides may make elements share memory (`empty_strided({2, 2}, {1, 1})`): such a tensor can be
// read, but an op refuses it as an out= or in-place target.
Tensor empty_strided(IntArrayRef sizes, IntArrayRef strides, DType dtype = kFloat32,
                     Device device = default_device());
Tensor full(IntArrayRef sizes, const Scalar& value, DType dtype = kFloat32,
            Device device = default_device());
Tensor zeros(IntArrayRef sizes, DType dtype = kFloat32, Device device = default_device());
Tensor ones(IntArrayRef sizes, DType dtype = kFloat32, Device device = default_device());
// Standard normal / uniform [0, 1) values from the host generator (bp::manual_seed), then
// copied to `device`, so results agree across devices for one seed.
Tensor randn(IntArrayRef sizes, DType dtype = kFloat32, Device device = default_device());
Tensor rand(IntArrayRef sizes, DType dtype = kFloat32, Device device = default_device());
void manual_seed(uint64_t seed);
// A 0-dim tensor holding `value`.
Tensor scalar_tensor(const Scalar& value, DType dtype, Device device = default_device());
// A view of host memory the caller owns and keeps alive; contiguous unless strides are given
// (which, as empty_strided's, may make elements share memory).
Tensor from_blob(void* data, IntArrayRef sizes, DType dtype = kFloat32);
Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides, DType dtype);
// A host tensor holding a copy of `values`; T decides the dtype (float -> Float32, ...).
template <typename T>
Tensor from_vector(const std::vector<T>& values, IntArrayRef sizes);

}  // namespace bp
