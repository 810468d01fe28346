// A tensor converted to another dtype, dense, in a buffer of its own: for kernels compiled for
// one dtype that are handed an input of another (sum and mean of an input that widens exactly
// to out's dtype).
#pragma once

#include "cl_call.h"

#include <backplane/sdk/tensor_view.hpp>

#include <cstdint>
#include <string_view>
#include <vector>

namespace bp::opencl {

class ConvertedCopy {
 public:
  // `src` must have elements: OpenCL has no empty buffers.
  ConvertedCopy(std::string_view op, const plugin::TensorView& src, DType dtype);
  ConvertedCopy(const ConvertedCopy&) = delete;
  ConvertedCopy& operator=(const ConvertedCopy&) = delete;

  plugin::TensorView view() const { return plugin::TensorView(&tensor_); }

 private:
  OwnedBuffer buffer_;
  std::vector<int64_t> sizes_;
  std::vector<int64_t> strides_;
  DLTensor tensor_{};
};

}  // namespace bp::opencl
