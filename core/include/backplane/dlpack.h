// DLPack exchange: tensors shared with other libraries (NumPy, PyTorch, CuPy, ...) without a
// copy, as DLPack 0.6's DLManagedTensor (<dlpack/dlpack.h>). docs/dlpack.md has the rules.
#pragma once

#include <backplane/tensor.h>

#include <dlpack/dlpack.h>

namespace bp {

// A new DLManagedTensor that views `tensor`'s memory with its shape, strides and dtype, for a
// consumer to take over: it keeps the memory alive until the consumer calls its deleter, once.
// The shape and strides arrays belong to it. A host tensor is a kDLCPU one; a device's tensor
// carries its backend's DLPack device type and its index. A bp::Error for an undefined tensor
// and for a backend whose plugin declares no DLPack device type (kDLExtDev).
DLManagedTensor* to_dlpack(const Tensor& tensor);

// A tensor that views the memory `managed` describes, on the device its DLDevice names: the
// host for kDLCPU and kDLCUDAHost, otherwise that device of the loaded backend with that
// DLPack device type. Always takes ownership of `managed`: its deleter (when not NULL) runs
// exactly once, when the last tensor, view or storage of the memory goes away, or before
// from_dlpack throws a bp::Error for a DLManagedTensor it cannot take (an unknown device or
// dtype, a negative size or stride, more dimensions than kernels take). A null `managed` is a
// bp::Error too. A DLManagedTensor made by to_dlpack gives back a tensor on the same storage,
// which shares its version counter (Tensor::_version) with the exported tensor.
Tensor from_dlpack(DLManagedTensor* managed);

// The DLDevice to_dlpack(tensor) would carry (what Python's __dlpack_device__ returns), with
// the same errors.
DLDevice dlpack_device(const Tensor& tensor);

}  // namespace bp
