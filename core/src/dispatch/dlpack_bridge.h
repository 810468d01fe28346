// Kernel arguments in their ABI form, built on the stack from core values: no heap allocation
// for tensors, scalars, ints and optional values.
#pragma once

#include <backplane/abi.h>
#include <backplane/array_ref.h>
#include <backplane/tensor.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace bp::detail {

// A DLTensor that points at the tensor's own sizes and strides.
DLTensor to_dlpack_view(const Tensor& t);

class OptionalDLTensor {
 public:
  explicit OptionalDLTensor(const std::optional<Tensor>& t) : present_(t && t->defined()) {
    if (present_) view_ = to_dlpack_view(*t);
  }
  const DLTensor* get() const { return present_ ? &view_ : nullptr; }

 private:
  bool present_;
  DLTensor view_{};
};

class DLTensorList {
 public:
  explicit DLTensorList(const std::vector<Tensor>& tensors);
  bp_tensor_list get() const { return {pointers_.data(), static_cast<int64_t>(pointers_.size())}; }

 private:
  std::vector<DLTensor> views_;
  std::vector<const DLTensor*> pointers_;
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
inline int32_t to_abi(std::optional<DType> d) {
  return d ? static_cast<int32_t>(*d) : static_cast<int32_t>(BP_DTYPE_NONE);
}
inline uint8_t to_abi(bool b) { return b ? 1 : 0; }
inline int64_t to_abi(int64_t v) { return v; }
inline double to_abi(double v) { return v; }
// Strings must be NUL-terminated across the ABI; short ones fit std::string's inline buffer.
inline std::string to_abi(std::string_view s) { return std::string(s); }

}  // namespace bp::detail
