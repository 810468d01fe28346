#include <backplane/tensor.h>

#include "autograd/autograd_meta.h"
#include "dispatch/dlpack_bridge.h"
#include "memory/object_recycler.h"
#include "tensor/host_address.h"
#include "tensor/shape.h"

#include <fmt/format.h>

namespace bp {

TensorImpl::TensorImpl(IntrusivePtr<StorageImpl> storage, DType dtype, DimVector sizes,
                       DimVector strides, int64_t storage_offset)
    : storage_(std::move(storage)),
      sizes_(std::move(sizes)),
      strides_(std::move(strides)),
      storage_offset_(storage_offset),
      dtype_(dtype) {
  complete();
}

TensorImpl::TensorImpl(IntrusivePtr<StorageImpl> storage, DType dtype, IntArrayRef sizes)
    : storage_(std::move(storage)),
      sizes_(sizes),
      strides_(detail::contiguous_strides(sizes)),
      storage_offset_(0),
      dtype_(dtype) {
  complete();
}

TensorImpl::~TensorImpl() = default;

autograd::AutogradMeta& TensorImpl::ensure_autograd_meta() {
  if (!autograd_meta_) autograd_meta_ = std::make_unique<autograd::AutogradMeta>();
  return *autograd_meta_;
}

void TensorImpl::complete() {
  // Every path that makes sizes checks them, naming its op: empty, empty_strided and from_blob
  // (checked_numel, storage_extent), view and reshape (infer_size), expand; the other views keep
  // or shrink the count. Checking here too would add a call to every op's output
  // (bench/README.md has its cost).
  numel_ = 1;
  for (int64_t s : sizes_) numel_ *= s;
  dlpack_view_ = {detail::make_dlpack_view(*this), this};
}

void* TensorImpl::operator new(size_t size) {
  return detail::ObjectRecycler<sizeof(TensorImpl)>::allocate(size);
}

void TensorImpl::operator delete(void* ptr, size_t size) noexcept {
  detail::ObjectRecycler<sizeof(TensorImpl)>::deallocate(ptr, size);
}

void Tensor::throw_undefined(const char* method) {
  throw Error(
      fmt::format("{}() called on an undefined bp::Tensor (default-constructed, or moved "
                  "from): assign it a tensor first",
                  method));
}

int64_t Tensor::size(int64_t dim) const {
  return sizes()[detail::wrap_dim("size", dim, this->dim(), /*wrap_scalar=*/false)];
}

int64_t Tensor::stride(int64_t dim) const {
  return strides()[detail::wrap_dim("stride", dim, this->dim(), /*wrap_scalar=*/false)];
}

// Row-major with no gaps; size-1 dims may have any stride, and a tensor with no elements
// counts as contiguous, as in PyTorch.
bool Tensor::is_contiguous() const {
  if (numel() == 0) return true;
  int64_t expected = 1;
  for (int64_t d = dim() - 1; d >= 0; --d) {
    const int64_t size = sizes()[d];
    if (size != 1 && strides()[d] != expected) return false;
    expected *= size;
  }
  return true;
}

const void* Tensor::const_data_ptr() const {
  if (!device().is_cpu()) {
    throw Error(
        fmt::format("data_ptr: the tensor is on {}, and only host tensors have host "
                    "addresses; call .cpu() first",
                    device().str()));
  }
  return detail::host_address(*this);
}

void* Tensor::data_ptr() const {
  const void* address = const_data_ptr();
  // Whatever the caller does with the address is out of Backplane's sight.
  impl_->storage()->share_address();
  return const_cast<void*>(address);
}

std::string Tensor::str() const {
  if (!defined()) return "Tensor(undefined)";
  return fmt::format("Tensor{} {} {}", detail::format_shape(sizes()), dtype_name(dtype()),
                     device().str());
}

}  // namespace bp
