// bp::from_dlpack.
#include <backplane/dlpack.h>

#include "interop/dlpack_devices.h"
#include "interop/dlpack_export.h"
#include "tensor/shape.h"

#include <backplane/dim_vector.h>
#include <backplane/error.h>
#include <backplane/sdk/strided_loop.hpp>

#include <fmt/format.h>

#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>

namespace bp {
namespace {

constexpr std::string_view kOp = "from_dlpack";

// The storage's release function: the producer's deleter, run once.
void release_managed(void* context) {
  auto* managed = static_cast<DLManagedTensor*>(context);
  managed->deleter(managed);
}

std::string_view dlpack_type_code_name(uint8_t code) {
  switch (code) {
    case kDLInt: return "kDLInt";
    case kDLUInt: return "kDLUInt";
    case kDLFloat: return "kDLFloat";
    case kDLOpaqueHandle: return "kDLOpaqueHandle";
    case kDLBfloat: return "kDLBfloat";
    case kDLComplex: return "kDLComplex";
    case BP_DL_BOOL_CODE: return "kDLBool";
    default: return "unknown";
  }
}

DType imported_dtype(DLDataType type) {
  const std::optional<DType> dtype = from_dlpack(type);
  if (!dtype) {
    throw Error(fmt::format(
        "{}: the DLPack dtype (code {} ({}), {} bits, {} lanes) is none of Backplane's: it "
        "takes one lane of kDLFloat 16, 32 or 64 bits, kDLBfloat 16, kDLInt 8, 32 or 64, "
        "kDLUInt 8 and kDLBool 8; convert the data to one of those before sharing it",
        kOp, type.code, dlpack_type_code_name(type.code), type.bits, type.lanes));
  }
  return *dtype;
}

// What a producer's DLTensor describes, checked and in Backplane's terms.
struct ImportedLayout {
  Device device;
  DType dtype = kFloat32;
  DimVector sizes;
  DimVector strides;
  void* data = nullptr;
  int64_t storage_offset = 0;
  size_t nbytes = 0;
};

ImportedLayout read_layout(const DLTensor& view) {
  ImportedLayout layout;
  if (view.ndim < 0 || static_cast<size_t>(view.ndim) > plugin::kMaxDims) {
    throw Error(fmt::format("{}: the DLTensor has {} dimensions; Backplane's kernels take 0 to {}",
                            kOp, view.ndim, plugin::kMaxDims));
  }
  const auto ndim = static_cast<size_t>(view.ndim);
  if (ndim > 0 && view.shape == nullptr) {
    throw Error(fmt::format("{}: the DLTensor has {} dimensions but no shape array", kOp, ndim));
  }
  layout.dtype = imported_dtype(view.dtype);
  layout.sizes = DimVector(IntArrayRef(view.shape, ndim));
  // No strides array means compact row-major.
  layout.strides = view.strides != nullptr ? DimVector(IntArrayRef(view.strides, ndim))
                                           : detail::contiguous_strides(layout.sizes);
  const int64_t extent = detail::storage_extent(layout.sizes, layout.strides, kOp);
  const auto element_size = static_cast<int64_t>(bp::element_size(layout.dtype));
  int64_t extent_bytes = 0;
  if (__builtin_mul_overflow(extent, element_size, &extent_bytes)) {
    throw Error(fmt::format("{}: shape {} with strides {} reaches past 2^63 bytes", kOp,
                            detail::format_shape(layout.sizes),
                            detail::format_shape(layout.strides)));
  }
  if (view.data == nullptr && extent > 0) {
    throw Error(fmt::format("{}: the DLTensor's data pointer is null, but shape {} has elements",
                            kOp, detail::format_shape(layout.sizes)));
  }
  layout.device = detail::imported_device(view.device, kOp);

  const int32_t device_type = detail::dlpack_device_type_number(view.device);
  if (detail::dlpack_data_is_address(device_type)) {
    layout.data = view.data == nullptr ? nullptr : static_cast<char*>(view.data) + view.byte_offset;
    layout.nbytes = static_cast<size_t>(extent_bytes);
    return layout;
  }
  // A handle (cl_mem) takes no arithmetic: the offset stays an offset into its memory.
  if (view.byte_offset % static_cast<uint64_t>(element_size) != 0) {
    throw Error(fmt::format(
        "{}: the DLTensor's byte_offset {} is not a multiple of its element size {}, which "
        "{} memory needs, as its data pointer is a handle",
        kOp, view.byte_offset, element_size, detail::describe_dlpack_device_type(device_type)));
  }
  uint64_t nbytes = 0;
  if (__builtin_add_overflow(view.byte_offset, static_cast<uint64_t>(extent_bytes), &nbytes) ||
      nbytes > static_cast<uint64_t>(INT64_MAX)) {
    throw Error(
        fmt::format("{}: the DLTensor's byte_offset {} and extent of {} bytes reach past "
                    "2^63 bytes",
                    kOp, view.byte_offset, extent_bytes));
  }
  layout.data = view.data;
  layout.storage_offset = static_cast<int64_t>(view.byte_offset) / element_size;
  layout.nbytes = static_cast<size_t>(nbytes);
  return layout;
}

// Runs the deleter of a DLManagedTensor that to_dlpack made when it goes out of scope: the
// alias holds the storage itself.
class ReleasesOnExit {
 public:
  explicit ReleasesOnExit(DLManagedTensor* managed) : managed_(managed) {}
  ReleasesOnExit(const ReleasesOnExit&) = delete;
  ReleasesOnExit& operator=(const ReleasesOnExit&) = delete;
  ~ReleasesOnExit() { managed_->deleter(managed_); }

 private:
  DLManagedTensor* managed_;
};

}  // namespace

Tensor from_dlpack(DLManagedTensor* managed) {
  if (managed == nullptr) {
    throw Error(fmt::format("{}: the DLManagedTensor is null; pass one a producer made", kOp));
  }
  if (const detail::ExportedTensor* exported = detail::exported_by_backplane(*managed)) {
    const ReleasesOnExit release(managed);
    return detail::alias_of_exported(*exported);
  }
  IntrusivePtr<StorageImpl> storage;
  ImportedLayout layout;
  try {
    layout = read_layout(managed->dl_tensor);
    // From here on the storage runs the deleter.
    storage = StorageImpl::adopt(layout.device, layout.data, layout.nbytes,
                                 managed->deleter != nullptr ? release_managed : nullptr, managed);
  } catch (...) {
    if (managed->deleter != nullptr) managed->deleter(managed);
    throw;
  }
  return Tensor(make_intrusive<TensorImpl>(std::move(storage), layout.dtype,
                                           std::move(layout.sizes), std::move(layout.strides),
                                           layout.storage_offset));
}

}  // namespace bp
