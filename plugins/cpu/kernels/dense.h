// Contiguous arrays of a tensor's elements, for kernels (oneDNN's) that read and write plain
// row-major layouts fastest: the tensor's own memory when it is one already, otherwise a copy
// in a scratch buffer, converted to the dtype the kernel computes in on the way.
#pragma once

#include "kernels/copy_elements.h"
#include "kernels/strided_loop.h"
#include "runtime/scratch_buffer.h"

#include <optional>
#include <span>

namespace bp::cpu {

// Row-major strides of a contiguous tensor of `sizes`.
DimValues<int64_t> contiguous_strides(std::span<const int64_t> sizes);

class DenseInput {
 public:
  // `source` holds elements of `sizes`; data() holds them contiguously as `dtype`.
  DenseInput(std::span<const int64_t> sizes, const StridedElements& source, DType dtype);
  DenseInput(const TensorView& view, DType dtype);
  DenseInput(const DenseInput&) = delete;
  DenseInput& operator=(const DenseInput&) = delete;

  const void* data() const { return data_; }

 private:
  std::optional<ScratchBuffer> copy_;
  const void* data_ = nullptr;
};

class DenseOutput {
 public:
  // data() takes a result of `sizes` as contiguous `dtype` elements; finish() puts it into
  // `target` when that is not the same memory.
  DenseOutput(std::span<const int64_t> sizes, const StridedElements& target, DType dtype);
  DenseOutput(const TensorView& view, DType dtype);
  DenseOutput(const DenseOutput&) = delete;
  DenseOutput& operator=(const DenseOutput&) = delete;

  void* data() const { return data_; }
  void finish() const;

 private:
  DimValues<int64_t> sizes_;
  StridedElements target_;
  DType dtype_;
  std::optional<ScratchBuffer> copy_;
  void* data_ = nullptr;
};

}  // namespace bp::cpu
