// fill_ and arange: tensors written from scalars (kernels/copy.cu).
#include "CUDANativeFunctions.h"

#include "cuda_call.h"
#include "device_guard.h"
#include "tensor_access.h"

#include <backplane/sdk/dispatch.hpp>

#include <cstring>
#include <string>

namespace bp::cuda {
namespace {

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

void fill__Scalar(const TensorView& self, const Scalar& value) {
  const OnDevice on(self);
  Device& device = on.device();
  const uint64_t bits = element_bits(self.dtype(), value);
  const size_t size = element_size(self.dtype());
  for_each_launch<1>(device, self.sizes(), {operand_of(self)}, [&](const ElementwiseLaunch<1>& launch) {
    if (!launch.dense || bits != 0) return launch_fill_bits(size, bits, launch);
    const DeviceGuard guard(device.index());
    const auto bytes = static_cast<size_t>(launch.numel) * size;
    check_cuda(cudaMemsetAsync(launch.data[0], 0, bytes, launch.target.stream),
               device.label() + ": zeroing " + std::to_string(bytes) + " bytes");
  });
}

// out[i] = start + i * step; the meta step sized out, which is one-dimensional.
void arange_start_out(const Scalar& start, const Scalar& /*end: out's size encodes it*/, const Scalar& step,
                      const TensorView& out) {
  plugin::check(out.dim() == 1, "arange: the output must be one-dimensional");
  const OnDevice on(out);
  launch_arange(out.dtype(), address_of(out), out.size(0), out.stride(0), start, step, on.launch_target());
}

}  // namespace bp::cuda
