// The host side of kernels/copy.cl: copying the elements of one strided place into another of
// any dtype (copy_, cat, and the scratch copy of an overlapping source), and ConvertedCopy, a
// tensor converted to another dtype in a dense buffer of its own, for kernels compiled for one
// dtype that are handed an input of another (sum and mean of an input that widens exactly to
// out's dtype).
#pragma once

#include "runtime/cl_call.h"
#include "runtime/device.h"
#include "runtime/kernel_launch.h"

#include <backplane/sdk/dense_tensor.hpp>
#include <backplane/sdk/tensor_view.hpp>

#include <cstdint>
#include <span>
#include <string_view>

namespace bp::opencl {

// Elements of one dtype at a strided address: a tensor, or a slice of one.
struct Elements {
  Operand at;
  DType dtype;
};

// dst[i] = src[i] converted to dst's dtype (as a C++ static_cast would), for every index i of
// `sizes`; both operands' strides span `sizes`. Plain buffer copies where both sides are dense
// and of one dtype; a source that overlaps dst is staged in a scratch buffer first.
void copy_elements(Device& device, std::string_view op, std::span<const int64_t> sizes,
                   const Elements& dst, const Elements& src);

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
