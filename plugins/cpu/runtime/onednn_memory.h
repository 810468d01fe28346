// Describing this plugin's tensors to oneDNN.
#pragma once

#include <backplane/sdk/dtype.hpp>

#include <oneapi/dnnl/dnnl.hpp>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>

namespace bp::cpu::onednn {

// The oneDNN data type that holds `dtype`'s elements, for the floating dtypes oneDNN computes
// in (float32, float16, bfloat16); nullopt otherwise.
std::optional<dnnl::memory::data_type> data_type_of(DType dtype);

// A strided descriptor: element i lies at sum(index[d] * strides[d]) elements from the start.
dnnl::memory::desc strided_desc(std::span<const int64_t> sizes, std::span<const int64_t> strides,
                                dnnl::memory::data_type type);

// A memory object over elements the caller owns; oneDNN only reads those of inputs.
dnnl::memory wrap(const dnnl::memory::desc& desc, const void* data);

// Whether oneDNN takes each of `values` (sizes, kernel sizes, strides, dilations, paddings) in a
// primitive's description: it refuses any that an int cannot hold.
bool takes_dims(std::initializer_list<int64_t> values);

}  // namespace bp::cpu::onednn
