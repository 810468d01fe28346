// Strided, dtype-converting element copies: copy_, cat, index_select's strided slices and the
// dense arrays handed to oneDNN (dense.h) are made with them.
#pragma once

#include "kernels/strided_loop.h"

#include <cstdint>
#include <span>

namespace bp::cpu {

// Elements of any dtype at a strided address: a tensor, or a part of one.
struct StridedElements {
  void* data;  // the first element
  DType dtype;
  std::span<const int64_t> strides;
};

inline StridedElements elements_of(const TensorView& view) {
  return {view.data<void>(), view.dtype(), view.strides()};
}

// dst[i] = src[i] converted to dst's dtype (as a C++ static_cast would), for every index i of
// `sizes`.
void copy_elements(std::span<const int64_t> sizes, const StridedElements& dst,
                   const StridedElements& src);

}  // namespace bp::cpu
