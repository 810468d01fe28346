// oneDNN data types, strided descriptors and memory objects for this plugin's tensors
// (onednn_memory.h).
#include "runtime/onednn_memory.h"

#include "runtime/onednn.h"

#include <algorithm>
#include <limits>

namespace bp::cpu::onednn {

std::optional<dnnl::memory::data_type> data_type_of(DType dtype) {
  switch (dtype) {
    case DType::Float32: return dnnl::memory::data_type::f32;
    case DType::Float16: return dnnl::memory::data_type::f16;
    case DType::BFloat16: return dnnl::memory::data_type::bf16;
    default: return std::nullopt;
  }
}

dnnl::memory::desc strided_desc(std::span<const int64_t> sizes, std::span<const int64_t> strides,
                                dnnl::memory::data_type type) {
  return dnnl::memory::desc(dnnl::memory::dims(sizes.begin(), sizes.end()), type,
                            dnnl::memory::dims(strides.begin(), strides.end()));
}

dnnl::memory wrap(const dnnl::memory::desc& desc, const void* data) {
  // oneDNN takes a non-const handle for every argument; inputs are only read.
  return dnnl::memory(desc, engine(), const_cast<void*>(data));
}

bool takes_dims(std::initializer_list<int64_t> values) {
  return std::ranges::all_of(values, [](int64_t v) {
    return v >= std::numeric_limits<int>::min() && v <= std::numeric_limits<int>::max();
  });
}

}  // namespace bp::cpu::onednn
