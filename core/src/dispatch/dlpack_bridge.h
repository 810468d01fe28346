// Kernel arguments in their ABI form, built on the stack from core values: no heap allocation
// for tensors, scalars, ints and optional values.
#pragma once

#include <backplane/abi.h>
#include <backplane/array_ref.h>
#include <backplane/tensor.h>

#include <array>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace bp::detail {

// DLPack's device type for a device of a plugin, as install_backend recorded it for the
// device's type; kDLExtDev for a type no backend was installed for.
DLDeviceType plugin_dlpack_device_type(Device device);
// Recorded by install_backend: the loader decides what a backend's devices are called in
// DLPack. A device type outside the dispatch table is a bp::Error.
void set_dlpack_device_type(int16_t device_type, DLDeviceType dlpack_device_type);

// to_dlpack and element_size of each dtype, indexed by its value: a load instead of a switch.
struct DLPackElement {
  DLDataType type;
  uint64_t size;
};
inline constexpr auto kDLPackElements = [] {
  std::array<DLPackElement, std::size(kAllDTypes)> elements{};
  for (DType d : kAllDTypes) {
    elements.at(static_cast<size_t>(d)) = {to_dlpack(d), element_size(d)};
  }
  return elements;
}();

// A DLTensor that points at the tensor's own sizes and strides (TensorImpl::dlpack_view keeps
// one from construction on).
inline DLTensor make_dlpack_view(const TensorImpl& impl) {
  const Device device = impl.device();
  DLTensor view;
  view.data = impl.storage()->data();
  view.device = {device.is_cpu() ? kDLCPU : plugin_dlpack_device_type(device), device.index()};
  view.ndim = static_cast<int>(impl.sizes().size());
  const DLPackElement& element = kDLPackElements[static_cast<size_t>(impl.dtype())];
  view.dtype = element.type;
  // DLPack's fields are not const, but kernels only read an input's sizes and strides.
  view.shape = const_cast<int64_t*>(impl.sizes().data());
  view.strides = const_cast<int64_t*>(impl.strides().data());
  view.byte_offset = static_cast<uint64_t>(impl.storage_offset()) * element.size;
  return view;
}

// A tensor as a kernel reads it: a pointer to the view its TensorImpl keeps.
inline const DLTensor* to_dlpack_input(const Tensor& t) { return &t.impl()->dlpack_view(); }

// A copy of the view, for a tensor a kernel writes: the kernel gets a DLTensor*, and whatever
// it might write through it must not reach the TensorImpl's own view.
inline DLTensor to_dlpack_view(const Tensor& t) { return t.impl()->dlpack_view(); }

// A `Tensor?` argument: NULL when absent or undefined.
class OptionalDLTensor {
 public:
  explicit OptionalDLTensor(const std::optional<Tensor>& t)
      : view_(t && t->defined() ? to_dlpack_input(*t) : nullptr) {}
  const DLTensor* get() const { return view_; }

 private:
  const DLTensor* view_;
};

// A `Tensor[]` argument; the tensors must outlive it.
class DLTensorList {
 public:
  explicit DLTensorList(const std::vector<Tensor>& tensors);
  bp_tensor_list get() const { return {views_.data(), static_cast<int64_t>(views_.size())}; }

 private:
  std::vector<const DLTensor*> views_;
};

inline bp_scalar to_abi(const Scalar& s) { return s.to_abi(); }
inline bp_int_list to_abi(IntArrayRef list) {
  static const int64_t kEmpty = 0;  // an empty list still has a non-NULL data pointer
  return {list.data() ? list.data() : &kEmpty, static_cast<int64_t>(list.size())};
}
inline bp_int_list to_abi(const OptionalIntArrayRef& list) {
  return list.has_value() ? to_abi(list.value()) : bp_int_list{nullptr, 0};
}
inline bp_optional_int to_abi(std::optional<int64_t> v) {
  return {v.value_or(0), static_cast<uint8_t>(v.has_value())};
}
inline bp_optional_float to_abi(std::optional<double> v) {
  return {v.value_or(0.0), static_cast<uint8_t>(v.has_value())};
}
inline int32_t to_abi(DType d) { return static_cast<int32_t>(d); }
inline int32_t to_abi(std::optional<DType> d) {
  return d ? static_cast<int32_t>(*d) : static_cast<int32_t>(BP_DTYPE_NONE);
}
inline uint8_t to_abi(bool b) { return b ? 1 : 0; }
inline int64_t to_abi(int64_t v) { return v; }
inline double to_abi(double v) { return v; }
// Strings must be NUL-terminated across the ABI; short ones fit std::string's inline buffer.
inline std::string to_abi(std::string_view s) { return std::string(s); }

}  // namespace bp::detail
