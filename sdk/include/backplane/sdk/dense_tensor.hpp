// A dense tensor's description over memory owned elsewhere (a plugin's scratch buffer): the
// DLTensor a TensorView reads, with the shape and strides it points to kept here.
#pragma once

#include <backplane/abi.h>
#include <backplane/sdk/dtype.hpp>
#include <backplane/sdk/tensor_view.hpp>

#include <cstdint>
#include <span>
#include <vector>

namespace bp::plugin {

class DenseTensor {
 public:
  // `data` is a device pointer as the plugin's allocate returns it (a host address, a cl_mem).
  DenseTensor(void* data, DLDevice device, DType dtype, std::span<const int64_t> sizes)
      : sizes_(sizes.begin(), sizes.end()), strides_(contiguous_strides(sizes)) {
    tensor_.data = data;
    tensor_.device = device;
    tensor_.ndim = static_cast<int32_t>(sizes_.size());
    tensor_.dtype = to_dlpack(dtype);
    tensor_.shape = sizes_.data();
    tensor_.strides = strides_.data();
  }
  // The DLTensor points into this object.
  DenseTensor(const DenseTensor&) = delete;
  DenseTensor& operator=(const DenseTensor&) = delete;

  TensorView view() const { return TensorView(&tensor_); }
  std::span<const int64_t> strides() const { return strides_; }

 private:
  std::vector<int64_t> sizes_;
  std::vector<int64_t> strides_;
  DLTensor tensor_{};
};

}  // namespace bp::plugin
