// A tensor converted to another dtype, dense, in a buffer of its own: for kernels compiled for
// one dtype that are handed an input of another (sum and mean of an input that widens exactly
// to out's dtype).
#pragma once

#include "cl_call.h"

#include <backplane/sdk/dense_tensor.hpp>
#include <backplane/sdk/tensor_view.hpp>

#include <string_view>

namespace bp::opencl {

class ConvertedCopy {
 public:
  // `src` must have elements: OpenCL has no empty buffers.
  ConvertedCopy(std::string_view op, const plugin::TensorView& src, DType dtype);
  ConvertedCopy(const ConvertedCopy&) = delete;
  ConvertedCopy& operator=(const ConvertedCopy&) = delete;

  plugin::TensorView view() const { return dense_.view(); }

 private:
  OwnedBuffer buffer_;
  plugin::DenseTensor dense_;
};

}  // namespace bp::opencl
