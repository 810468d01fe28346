#include "kernels/copy_elements.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

namespace bp::opencl {
namespace {

// A buffer of its own for `bytes`, which must not be 0.
OwnedBuffer allocate_buffer(std::string_view op, Device& device, size_t bytes) {
  cl_int error = CL_SUCCESS;
  OwnedBuffer buffer(clCreateBuffer(device.context(), CL_MEM_READ_WRITE, bytes, nullptr, &error));
  check_cl(error, std::string(op) + ": allocating " + std::to_string(bytes) + " bytes on " +
                      device.label());
  return buffer;
}

// The bytes `elements` spans over `sizes`, as [first, last).
std::pair<int64_t, int64_t> byte_span(const Elements& elements, std::span<const int64_t> sizes) {
  int64_t first = elements.at.buffer.base, last = elements.at.buffer.base;
  for (size_t d = 0; d < sizes.size(); ++d) {
    const int64_t reach = (sizes[d] - 1) * elements.at.strides[d];
    (reach < 0 ? first : last) += reach;
  }
  const auto size = static_cast<int64_t>(element_size(elements.dtype));
  return {first * size, (last + 1) * size};
}

// The dtype's name in copy.cl's kernel names: "float32", "bfloat16", "bool".
std::string_view kernel_dtype_name(DType dtype) {
  switch (dtype) {
    case DType::Float32: return "float32";
    case DType::Float64: return "float64";
    case DType::Float16: return "float16";
    case DType::BFloat16: return "bfloat16";
    case DType::Int8: return "int8";
    case DType::UInt8: return "uint8";
    case DType::Int32: return "int32";
    case DType::Int64: return "int64";
    case DType::Bool: return "bool";
  }
  throw plugin::Error(BP_STATUS_UNIMPLEMENTED,
                      "unknown dtype code " + std::to_string(static_cast<int>(dtype)));
}

bool overlap(const Elements& dst, const Elements& src, std::span<const int64_t> sizes) {
  if (dst.at.buffer.mem != src.at.buffer.mem) return false;
  const auto [dst_first, dst_last] = byte_span(dst, sizes);
  const auto [src_first, src_last] = byte_span(src, sizes);
  return dst_first < src_last && src_first < dst_last;
}

}  // namespace

void copy_elements(Device& device, std::string_view op, std::span<const int64_t> sizes,
                   const Elements& dst, const Elements& src) {
  device.require_double_precision_for(op, dst.dtype);
  device.require_double_precision_for(op, src.dtype);
  const WalkShape shape =
      collapse(sizes, {dst.at.strides, src.at.strides}, op, /*outer_allowed=*/true);
  if (shape.numel == 0) return;
  const bool same_dtype = dst.dtype == src.dtype;
  if (overlap(dst, src, sizes)) {
    if (same_dtype && dst.at.buffer.base == src.at.buffer.base &&
        std::ranges::equal(dst.at.strides, src.at.strides)) {
      return;  // a tensor copied onto itself
    }
    // Elements written before others are read: stage the source in a scratch buffer.
    const OwnedBuffer scratch =
        allocate_buffer(op, device, static_cast<size_t>(shape.numel) * element_size(src.dtype));
    const std::vector<int64_t> dense_strides = plugin::contiguous_strides(sizes);
    const Elements staged{{{scratch.get(), 0}, dense_strides}, src.dtype};
    copy_elements(device, op, sizes, staged, src);
    copy_elements(device, op, sizes, dst, staged);
    return;
  }
  if (same_dtype && all_dense(shape)) {
    const size_t size = element_size(dst.dtype);
    check_cl(clEnqueueCopyBuffer(device.queue(), src.at.buffer.mem, dst.at.buffer.mem,
                                 static_cast<size_t>(src.at.buffer.base) * size,
                                 static_cast<size_t>(dst.at.buffer.base) * size,
                                 static_cast<size_t>(shape.numel) * size, 0, nullptr, nullptr),
             std::string(op) + ": copying on " + device.label());
    return;
  }
  // One width moves bits unchanged, so NaN payloads survive and every dtype of a width shares
  // one kernel.
  const std::string kernel = same_dtype ? "copy_bits" + std::to_string(8 * element_size(dst.dtype))
                                        : "copy_" + std::string(kernel_dtype_name(src.dtype)) +
                                              "_to_" + std::string(kernel_dtype_name(dst.dtype));
  launch_elementwise(device, device.program(KernelSource::Copy, std::nullopt), kernel.c_str(), op,
                     sizes, {dst.at, src.at});
}

ConvertedCopy::ConvertedCopy(std::string_view op, const plugin::TensorView& src, DType dtype)
    : buffer_(allocate_buffer(op, device_of(src),
                              static_cast<size_t>(src.numel()) * element_size(dtype))),
      dense_(buffer_.get(), src.device(), dtype, src.sizes()) {
  copy_elements(device_of(src), op, src.sizes(), {{{buffer_.get(), 0}, dense_.strides()}, dtype},
                {operand_of(src), src.dtype()});
}

}  // namespace bp::opencl
