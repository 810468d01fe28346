// copy_, cat, fill_ and arange: strided copies between any two dtypes, and tensors written from
// scalars. Same-dtype copies move bits (a plain cudaMemcpyAsync where both sides are dense);
// others convert (kernels/copy.cu). Fills write one element's bits, converted on the host.
#include "CUDANativeFunctions.h"

#include "kernels/cuda_call.h"
#include "runtime/converted_copy.h"
#include "runtime/device_guard.h"
#include "runtime/tensor_access.h"

#include <backplane/sdk/dispatch.hpp>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

namespace bp::cuda {
namespace {

// Elements of one dtype at a strided address: a tensor, or a slice of one.
struct Elements {
  Operand at;
  DType dtype;
};

// The addresses `elements` spans over `sizes`, as [first, last).
std::pair<uintptr_t, uintptr_t> byte_span(const Elements& elements,
                                          std::span<const int64_t> sizes) {
  int64_t low = 0, high = 0;
  for (size_t d = 0; d < sizes.size(); ++d) {
    const int64_t reach = (sizes[d] - 1) * elements.at.strides[d];
    (reach < 0 ? low : high) += reach;
  }
  const auto size = static_cast<int64_t>(elements.at.element_size);
  const auto base = reinterpret_cast<uintptr_t>(elements.at.data);
  return {base + low * size, base + (high + 1) * size};
}

bool overlap(const Elements& dst, const Elements& src, std::span<const int64_t> sizes) {
  const auto [dst_first, dst_last] = byte_span(dst, sizes);
  const auto [src_first, src_last] = byte_span(src, sizes);
  return dst_first < src_last && src_first < dst_last;
}

// dst[i] = src[i] converted to dst's dtype, for every index i of `sizes`; both operands'
// strides span `sizes`.
void copy_elements(Device& device, std::span<const int64_t> sizes, const Elements& dst,
                   const Elements& src) {
  int64_t numel = 1;
  for (const int64_t size : sizes) numel *= size;
  if (numel == 0) return;
  const bool same_dtype = dst.dtype == src.dtype;
  if (overlap(dst, src, sizes)) {
    if (same_dtype && dst.at.data == src.at.data &&
        std::ranges::equal(dst.at.strides, src.at.strides)) {
      return;  // a tensor copied onto itself
    }
    // Elements written before others are read: stage the source first.
    DeviceScratch scratch(device);
    const std::vector<int64_t> dense_strides = plugin::contiguous_strides(sizes);
    const Elements staged{
        {static_cast<char*>(scratch.allocate(static_cast<size_t>(numel) * src.at.element_size)),
         dense_strides, src.at.element_size},
        src.dtype};
    copy_elements(device, sizes, staged, src);
    copy_elements(device, sizes, dst, staged);
    return;
  }
  for_each_launch<2>(device, sizes, {dst.at, src.at}, [&](const ElementwiseLaunch<2>& launch) {
    if (!same_dtype) return launch_convert(dst.dtype, src.dtype, launch);
    if (!launch.dense) return launch_copy_bits(dst.at.element_size, launch);
    const DeviceGuard guard(device.index());
    const auto bytes = static_cast<size_t>(launch.numel) * dst.at.element_size;
    check_cuda(cudaMemcpyAsync(launch.data[0], launch.data[1], bytes, cudaMemcpyDeviceToDevice,
                               launch.target.stream),
               device.label() + ": copying " + std::to_string(bytes) + " bytes");
  });
}

// The bytes of `value` as one element of `dtype`, converted on the host exactly as the CPU
// backend converts it (value.to<T>(), the 16-bit floats through float).
uint64_t element_bits(DType dtype, const Scalar& value) {
  return plugin::visit(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T element = value.to<T>();
    uint64_t bits = 0;
    std::memcpy(&bits, &element, sizeof element);
    return bits;
  });
}

}  // namespace

ConvertedCopy::ConvertedCopy(Device& device, const TensorView& src, DType dtype)
    : scratch_(device),
      dense_(scratch_.allocate(static_cast<size_t>(src.numel()) * element_size(dtype)),
             src.device(), dtype, src.sizes()) {
  copy_elements(device, src.sizes(), {operand_of(dense_.view()), dtype},
                {operand_of(src), src.dtype()});
}

void copy_(const TensorView& self, const TensorView& src,
           bool /*non_blocking: copies are queued in order*/) {
  const OnDevice on(self);
  DimValues<int64_t> src_strides(0);
  copy_elements(on.device(), self.sizes(), {operand_of(self), self.dtype()},
                {broadcast_operand("copy_", src, self.sizes(), src_strides), src.dtype()});
}

// Each input is copied into its slice of out along `dim`, converted to out's dtype (the meta
// step computed the promoted dtype and out's shape).
void cat_out(std::span<const TensorView> tensors, int64_t dim, const TensorView& out) {
  dim = wrap_dim("cat", dim, out.dim());
  const OnDevice on(out);
  Device& device = on.device();
  int64_t offset = 0;  // where the next input starts along dim
  for (const TensorView& tensor : tensors) {
    // An empty input contributes nothing; this also skips PyTorch's legacy 1-d empty tensors,
    // whose shape need not match the others.
    if (tensor.numel() == 0) continue;
    Operand slice = operand_of(out);
    slice.data += offset * out.stride(dim) * static_cast<int64_t>(slice.element_size);
    copy_elements(device, tensor.sizes(), {slice, out.dtype()},
                  {operand_of(tensor), tensor.dtype()});
    offset += tensor.size(dim);
  }
}

void fill__Scalar(const TensorView& self, const Scalar& value) {
  const OnDevice on(self);
  Device& device = on.device();
  const uint64_t bits = element_bits(self.dtype(), value);
  const size_t size = element_size(self.dtype());
  for_each_launch<1>(device, self.sizes(), {operand_of(self)},
                     [&](const ElementwiseLaunch<1>& launch) {
                       if (!launch.dense || bits != 0) return launch_fill_bits(size, bits, launch);
                       const DeviceGuard guard(device.index());
                       const auto bytes = static_cast<size_t>(launch.numel) * size;
                       check_cuda(cudaMemsetAsync(launch.data[0], 0, bytes, launch.target.stream),
                                  device.label() + ": zeroing " + std::to_string(bytes) + " bytes");
                     });
}

// out[i] = start + i * step; the meta step sized out, which is one-dimensional.
void arange_start_out(const Scalar& start, const Scalar& /*end: out's size encodes it*/,
                      const Scalar& step, const TensorView& out) {
  plugin::check(out.dim() == 1, "arange: the output must be one-dimensional");
  const OnDevice on(out);
  launch_arange(out.dtype(), address_of(out), out.size(0), out.stride(0), start, step,
                on.launch_target());
}

}  // namespace bp::cuda
