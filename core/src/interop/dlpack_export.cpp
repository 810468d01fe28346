// bp::to_dlpack and bp::dlpack_device.
#include "interop/dlpack_export.h"

#include <backplane/dlpack.h>

#include "interop/dlpack_devices.h"

#include <backplane/dim_vector.h>
#include <backplane/error.h>

#include <fmt/format.h>

#include <cstdint>

namespace bp {
namespace detail {

// The manager context: the DLManagedTensor itself and what its DLTensor points into. It holds
// the storage rather than the tensor, so that an exported tensor's autograd graph is not kept
// alive by the consumer.
struct ExportedTensor {
  explicit ExportedTensor(const TensorImpl& impl)
      : storage(impl.storage()),
        dtype(impl.dtype()),
        shape(impl.sizes()),
        strides(impl.strides()),
        storage_offset(impl.storage_offset()) {
    // The consumer may write through the export at any time from now on.
    storage->share_address();
  }

  DLManagedTensor managed{};
  IntrusivePtr<StorageImpl> storage;
  DType dtype;
  DimVector shape;
  DimVector strides;
  int64_t storage_offset;
};

namespace {

void delete_exported(DLManagedTensor* managed) {
  delete static_cast<ExportedTensor*>(managed->manager_ctx);
}

const TensorImpl& defined_impl(const Tensor& tensor, std::string_view op) {
  if (!tensor.defined()) {
    throw Error(fmt::format(
        "{}: the tensor is undefined (default-constructed, or moved from): there is no memory "
        "to share",
        op));
  }
  return *tensor.impl();
}

}  // namespace

const ExportedTensor* exported_by_backplane(const DLManagedTensor& managed) {
  if (managed.deleter != &delete_exported) return nullptr;
  return static_cast<const ExportedTensor*>(managed.manager_ctx);
}

Tensor alias_of_exported(const ExportedTensor& exported) {
  return Tensor(make_intrusive<TensorImpl>(exported.storage, exported.dtype, exported.shape,
                                           exported.strides, exported.storage_offset));
}

}  // namespace detail

DLManagedTensor* to_dlpack(const Tensor& tensor) {
  const TensorImpl& impl = detail::defined_impl(tensor, "to_dlpack");
  const DLDevice device = detail::exported_dlpack_device(impl.device(), "to_dlpack");

  auto* exported = new detail::ExportedTensor(impl);
  DLTensor& view = exported->managed.dl_tensor;
  // The view kernels get has the right dtype and ndim; shape and strides now point at the
  // context's own arrays.
  view = impl.dlpack_view();
  view.device = device;
  view.shape = exported->shape.data();
  view.strides = exported->strides.data();
  // Consumers that ignore byte_offset (PyTorch before 2.0 among them) still find the first
  // element when it is already in the address. A handle (cl_mem) keeps it in byte_offset.
  if (detail::dlpack_data_is_address(device.device_type) && view.data != nullptr) {
    view.data = static_cast<char*>(view.data) + view.byte_offset;
    view.byte_offset = 0;
  }
  exported->managed.manager_ctx = exported;
  exported->managed.deleter = detail::delete_exported;
  return &exported->managed;
}

DLDevice dlpack_device(const Tensor& tensor) {
  return detail::exported_dlpack_device(detail::defined_impl(tensor, "dlpack_device").device(),
                                        "dlpack_device");
}

}  // namespace bp
