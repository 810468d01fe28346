// The first element's host address, for the core's own reads and its fills of tensors it just
// made: unlike Tensor::data_ptr, it leaves the storage's writes tracked, since the core's writes
// are its own.
#pragma once

#include <backplane/tensor.h>

namespace bp::detail {

inline void* host_address(const Tensor& t) {
  return static_cast<char*>(t.impl()->storage()->data()) + t.storage_offset() * t.element_size();
}

template <typename T>
T* host_address(const Tensor& t) {
  return static_cast<T*>(host_address(t));
}

}  // namespace bp::detail
