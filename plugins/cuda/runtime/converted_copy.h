// A tensor converted to another dtype, dense, in scratch memory of its device: for kernels
// instantiated for one dtype that are handed an input of another (sum and mean of an input that
// widens exactly to out's dtype). Made by the copy kernel, and so defined beside copy_ in
// ops/copy_fill.cpp.
#pragma once

#include "runtime/tensor_access.h"

#include <backplane/sdk/dense_tensor.hpp>

namespace bp::cuda {

class ConvertedCopy {
 public:
  // Queued on the device's stream, ahead of the kernels that read view().
  ConvertedCopy(Device& device, const TensorView& src, DType dtype);
  ConvertedCopy(const ConvertedCopy&) = delete;
  ConvertedCopy& operator=(const ConvertedCopy&) = delete;

  TensorView view() const { return dense_.view(); }

 private:
  DeviceScratch scratch_;
  plugin::DenseTensor dense_;
};

}  // namespace bp::cuda
