// A non-owning view of a DLTensor for kernel code: dtype, sizes, strides and typed data.
#pragma once

#include <backplane/abi.h>
#include <backplane/sdk/dtype.hpp>
#include <backplane/sdk/status.hpp>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace bp::plugin {

class TensorView {
 public:
  explicit TensorView(const DLTensor* t) : t_(t) {
    auto dtype = from_dlpack(t->dtype);
    if (!dtype) {
      throw Error(BP_STATUS_UNIMPLEMENTED,
                  "tensor has a DLPack dtype (code " + std::to_string(t->dtype.code) + ", bits " +
                      std::to_string(t->dtype.bits) + ", lanes " + std::to_string(t->dtype.lanes) +
                      ") that Backplane does not know");
    }
    dtype_ = *dtype;
  }

  DType dtype() const { return dtype_; }
  int64_t dim() const { return t_->ndim; }
  int64_t size(int64_t d) const { return t_->shape[d]; }
  int64_t stride(int64_t d) const { return t_->strides[d]; }
  std::span<const int64_t> sizes() const { return {t_->shape, static_cast<size_t>(t_->ndim)}; }
  std::span<const int64_t> strides() const { return {t_->strides, static_cast<size_t>(t_->ndim)}; }
  DLDevice device() const { return t_->device; }
  // The DLTensor itself, for what the core tells about it (storage_version.hpp).
  const DLTensor& dlpack() const { return *t_; }

  int64_t numel() const {
    int64_t n = 1;
    for (int64_t s : sizes()) n *= s;
    return n;
  }

  // Row-major with no gaps; size-1 dimensions may have any stride.
  bool is_contiguous() const {
    int64_t expected = 1;
    for (int64_t d = dim() - 1; d >= 0; --d) {
      if (size(d) != 1 && stride(d) != expected) return false;
      expected *= size(d);
    }
    return true;
  }

  // The first element, for backends whose device pointers are host addresses.
  template <typename T>
  T* data() const {
    return reinterpret_cast<T*>(static_cast<char*>(t_->data) + t_->byte_offset);
  }
  // The device pointer as allocated and the byte offset of the first element, for backends
  // whose device pointers are handles (OpenCL's cl_mem).
  void* handle() const { return t_->data; }
  uint64_t byte_offset() const { return t_->byte_offset; }

  const DLTensor* raw() const { return t_; }

 private:
  const DLTensor* t_;
  DType dtype_;
};

// Row-major strides of a dense tensor of `sizes`; a size-0 dimension steps like a size-1 one.
inline std::vector<int64_t> contiguous_strides(std::span<const int64_t> sizes) {
  std::vector<int64_t> strides(sizes.size());
  int64_t stride = 1;
  for (size_t d = sizes.size(); d-- > 0;) {
    strides[d] = stride;
    stride *= sizes[d] > 1 ? sizes[d] : 1;
  }
  return strides;
}

}  // namespace bp::plugin
