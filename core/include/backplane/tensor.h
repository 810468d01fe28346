// bp::Tensor: a reference-counted handle to a strided view of a Storage.
#pragma once

#include <backplane/array_ref.h>
#include <backplane/device.h>
#include <backplane/dim_vector.h>
#include <backplane/error.h>
#include <backplane/intrusive_ptr.h>
#include <backplane/sdk/dtype.hpp>
#include <backplane/sdk/half.hpp>  // bp::Half and bp::BFloat16, for to_vector<T> and item<T>
#include <backplane/sdk/scalar.hpp>
#include <backplane/storage.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

namespace bp {

namespace autograd {
class Node;
struct AutogradMeta;
struct HookList;
}  // namespace autograd

// Takes back a hook that Tensor::register_post_accumulate_grad_hook registered. Dropping the
// handle keeps the hook; remove() a second time, or after the tensor is gone, does nothing.
class HookHandle {
 public:
  HookHandle() = default;
  void remove();

 private:
  friend class Tensor;
  HookHandle(std::weak_ptr<autograd::HookList> hooks, uint64_t id)
      : hooks_(std::move(hooks)), id_(id) {}

  // Weak: a handle does not keep the tensor's hooks, or anything they capture, alive.
  std::weak_ptr<autograd::HookList> hooks_;
  uint64_t id_ = 0;
};

class TensorImpl : public RefCounted {
 public:
  TensorImpl(IntrusivePtr<StorageImpl> storage, DType dtype, DimVector sizes, DimVector strides,
             int64_t storage_offset);
  // A contiguous (row-major) tensor of `sizes` at the start of `storage`.
  TensorImpl(IntrusivePtr<StorageImpl> storage, DType dtype, IntArrayRef sizes);
  ~TensorImpl() override;

  // Every op makes one or more of these; their memory is recycled by each thread instead of
  // going back to malloc.
  static void* operator new(size_t size);
  static void operator delete(void* ptr, size_t size) noexcept;

  const IntrusivePtr<StorageImpl>& storage() const { return storage_; }
  DType dtype() const { return dtype_; }
  Device device() const { return storage_->device(); }
  const DimVector& sizes() const { return sizes_; }
  const DimVector& strides() const { return strides_; }
  int64_t storage_offset() const { return storage_offset_; }
  int64_t numel() const { return numel_; }
  // A 0-dim tensor the core made from a C++ number (bp::add(x, 2)); it takes part in type
  // promotion as PyTorch's wrapped numbers do: it never raises the result's category width.
  bool is_wrapped_number() const { return wrapped_number_; }
  void set_wrapped_number(bool value) { wrapped_number_ = value; }
  // How a kernel sees this tensor: DLPack's view of the same memory, sizes and strides. They
  // never change after construction, so the view is built once, and kernel calls pass a
  // pointer to it instead of building one per call.
  const DLTensor& dlpack_view() const { return dlpack_view_.tensor; }
  // The tensor whose dlpack_view() `view` is: how a service the core offers plugins finds the
  // storage behind a kernel's input. `view` must be a dlpack_view() of a live TensorImpl.
  static const TensorImpl& owner_of_view(const DLTensor& view) {
    return *reinterpret_cast<const OwnedView&>(view).owner;
  }

  // The tensor's place in the autograd graph; null for the tensors that have none (most of
  // them), which keeps ops on them free of autograd work.
  autograd::AutogradMeta* autograd_meta() const { return autograd_meta_.get(); }
  autograd::AutogradMeta& ensure_autograd_meta();

 private:
  // Sets what follows from the other members: numel_ and dlpack_view_.
  void complete();

  IntrusivePtr<StorageImpl> storage_;
  DimVector sizes_;
  DimVector strides_;
  int64_t storage_offset_;
  int64_t numel_ = 1;
  DType dtype_;
  bool wrapped_number_ = false;
  // Standard layout with the DLTensor first, so that a pointer to the one is one to the other.
  struct OwnedView {
    DLTensor tensor;
    const TensorImpl* owner;
  };
  static_assert(std::is_standard_layout_v<OwnedView>);
  OwnedView dlpack_view_;
  std::unique_ptr<autograd::AutogradMeta> autograd_meta_;
};

class Tensor {
 public:
  Tensor() = default;  // undefined: holds nothing
  explicit Tensor(IntrusivePtr<TensorImpl> impl) : impl_(std::move(impl)) {}

  bool defined() const { return static_cast<bool>(impl_); }
  TensorImpl* impl() const { return impl_.get(); }

  // These, and every method built on them, throw bp::Error on an undefined tensor.
  DType dtype() const { return defined_impl("dtype").dtype(); }
  Device device() const { return defined_impl("device").device(); }
  int64_t dim() const { return static_cast<int64_t>(defined_impl("dim").sizes().size()); }
  IntArrayRef sizes() const { return defined_impl("sizes").sizes().ref(); }
  IntArrayRef strides() const { return defined_impl("strides").strides().ref(); }
  // Negative dims count from the end; out of range is a bp::Error.
  int64_t size(int64_t dim) const;
  int64_t stride(int64_t dim) const;
  int64_t numel() const { return defined_impl("numel").numel(); }
  int64_t storage_offset() const { return defined_impl("storage_offset").storage_offset(); }
  size_t element_size() const { return bp::element_size(dtype()); }
  bool is_contiguous() const;
  // The first element's address, for tensors on the host only (a bp::Error otherwise). Backplane
  // cannot see writes through it, so from then on nothing computed from the storage's contents
  // is kept across calls (a backend's packed weights, say); const_data_ptr() reads without that.
  void* data_ptr() const;
  template <typename T>
  T* data_ptr() const {
    return static_cast<T*>(data_ptr());
  }
  // The same address, for reading only.
  const void* const_data_ptr() const;
  template <typename T>
  const T* const_data_ptr() const {
    return static_cast<const T*>(const_data_ptr());
  }
  std::string str() const;  // "Tensor[2, 3] Float cpu"

  // Views (view, reshape, permute, transpose, slice, select, expand, squeeze, unsqueeze,
  // flatten) and copies (contiguous, clone, to) are ops of ops.yaml, declared with the other
  // methods below.
  Tensor cpu() const { return to(Device::cpu()); }  // *this when already on the host

  // Autograd (docs/autograd.md), with PyTorch's meaning. Only floating-point tensors can
  // require grad.
  Tensor& requires_grad_(bool requires_grad = true);
  bool requires_grad() const;
  // The gradient accumulated by backward() (undefined until then); mutable_grad() lets an
  // optimizer reset or replace it.
  const Tensor& grad() const;
  Tensor& mutable_grad();
  // Calls `hook(leaf)` each time a backward() pass has added this leaf's gradient into grad():
  // once per pass that reaches the leaf, after every path's gradient is summed, so that a
  // data-parallel wrapper can start reducing grad() while the pass goes on to earlier layers.
  // - Hooks run in the order they were registered, on the thread that runs backward(), with
  //   grad mode off (as the whole pass runs): what a hook computes records no graph.
  // - `leaf` is this tensor, so a hook need not capture it (capturing it keeps it alive until
  //   the hook is removed). A hook may read grad() or replace it through mutable_grad(); the next
  //   hook sees what it left. autograd::grad() accumulates nothing and runs no hooks.
  // - The hooks belong to the tensor, not to a graph: every later forward's graph runs them.
  // - An exception from a hook ends the pass as a failing backward kernel does (a bp::Error
  //   from backward() that carries the hook's message); grad() already holds the sum, and the
  //   leaf's later hooks do not run for that pass.
  // Only a leaf that requires grad accepts a hook (a bp::Error otherwise). Register a leaf's
  // hooks before backward passes on other threads reach it; remove() is safe from any thread,
  // a running hook included.
  HookHandle register_post_accumulate_grad_hook(std::function<void(Tensor& leaf)> hook);
  // A leaf was made by the user rather than recorded by an op; only leaves accumulate grad().
  bool is_leaf() const;
  // The node that made this tensor, or null for a leaf.
  const std::shared_ptr<autograd::Node>& grad_fn() const;
  // Runs backward from this tensor (see bp::autograd::backward); `gradient` may be omitted for
  // a one-element tensor.
  void backward(const Tensor& gradient = Tensor(), bool retain_graph = false) const;
  // The same data without history: a new leaf that does not require grad.
  Tensor detach() const;
  // Counts the writes through Backplane into this tensor's storage (kernels' outputs, in-place
  // ops, copy_), shared by every view of it.
  uint64_t _version() const { return defined_impl("_version").storage()->version(); }

  // Reads values to the host. T must match dtype() (bool for Bool, bp::Half for Float16...).
  template <typename T>
  std::vector<T> to_vector() const;
  template <typename T>
  T item() const;

#include <backplane/generated/TensorMethods.inc>

 private:
  // Out of line, so that the check costs the accessors one branch.
  [[noreturn]] static void throw_undefined(const char* method);
  TensorImpl& defined_impl(const char* method) const {
    if (!impl_) [[unlikely]]
      throw_undefined(method);
    return *impl_;
  }

  IntrusivePtr<TensorImpl> impl_;
};

}  // namespace bp
