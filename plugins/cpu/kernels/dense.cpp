// Dense inputs and outputs for oneDNN (dense.h): the tensor's own memory when it is contiguous
// in the dtype asked for, else a converted copy in a scratch buffer.
#include "kernels/dense.h"

namespace bp::cpu {
namespace {

bool is_contiguous(std::span<const int64_t> sizes, std::span<const int64_t> strides) {
  int64_t expected = 1;
  for (size_t d = sizes.size(); d-- > 0;) {
    if (sizes[d] != 1 && strides[d] != expected) return false;
    expected *= sizes[d];
  }
  return true;
}

size_t byte_size(std::span<const int64_t> sizes, DType dtype) {
  size_t count = 1;
  for (const int64_t size : sizes) count *= static_cast<size_t>(size);
  return count * element_size(dtype);
}

}  // namespace

DimValues<int64_t> contiguous_strides(std::span<const int64_t> sizes) {
  DimValues<int64_t> strides(sizes.size(), 1);
  int64_t stride = 1;
  for (size_t d = sizes.size(); d-- > 0;) {
    strides[d] = stride;
    stride *= sizes[d];
  }
  return strides;
}

DenseInput::DenseInput(std::span<const int64_t> sizes, const StridedElements& source, DType dtype) {
  if (source.dtype == dtype && is_contiguous(sizes, source.strides)) {
    data_ = source.data;
    return;
  }
  copy_.emplace(byte_size(sizes, dtype));
  const DimValues<int64_t> strides = contiguous_strides(sizes);
  copy_elements(sizes, {copy_->data(), dtype, strides.span()}, source);
  data_ = copy_->data();
}

DenseInput::DenseInput(const TensorView& view, DType dtype)
    : DenseInput(view.sizes(), elements_of(view), dtype) {}

DenseOutput::DenseOutput(std::span<const int64_t> sizes, const StridedElements& target, DType dtype)
    : sizes_(sizes.size()), target_(target), dtype_(dtype) {
  for (size_t d = 0; d < sizes.size(); ++d) sizes_[d] = sizes[d];
  if (target.dtype == dtype && is_contiguous(sizes, target.strides)) {
    data_ = target.data;
    return;
  }
  copy_.emplace(byte_size(sizes, dtype));
  data_ = copy_->data();
}

DenseOutput::DenseOutput(const TensorView& view, DType dtype)
    : DenseOutput(view.sizes(), elements_of(view), dtype) {}

void DenseOutput::finish() const {
  if (!copy_) return;
  const DimValues<int64_t> strides = contiguous_strides(sizes_.span());
  copy_elements(sizes_.span(), target_, {copy_->data(), dtype_, strides.span()});
}

}  // namespace bp::cpu
