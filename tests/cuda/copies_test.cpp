// Copies between the host and a GPU: through the pinned staging chunks directly (sizes that
// span several chunks, odd offsets, a source overwritten as soon as the copy returns), and
// through the core (views with storage offsets, devices of one backend).
#include "cuda_test_support.h"

#include "kernels/cuda_call.h"
#include "runtime/runtime.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <vector>

namespace {

using bp::cuda::PinnedStaging;

std::vector<unsigned char> pattern(size_t size, unsigned seed) {
  std::vector<unsigned char> bytes(size);
  for (size_t i = 0; i < size; ++i)
    bytes[i] = static_cast<unsigned char>((i * 131 + seed * 17) >> 3);
  return bytes;
}

TEST_CASE(
    "host to device and back through pinned chunks, at odd offsets, the source reusable on "
    "return") {
  SKIP_WITHOUT_CUDA_DEVICE();
  bp::cuda::Device& device = bp::cuda::Runtime::get().device(0);
  const size_t chunk = PinnedStaging::kChunkBytes;
  const std::vector<size_t> sizes = {
      1, 1000, chunk - 1, chunk, 2 * chunk + 5, (PinnedStaging::kChunks + 2) * chunk + 3};
  const size_t capacity = sizes.back() + 16;
  auto* block = static_cast<unsigned char*>(device.allocator().allocate(capacity));
  for (const size_t offset : {size_t{0}, size_t{1}, size_t{7}}) {
    for (const size_t size : sizes) {
      INFO("offset " << offset << ", " << size << " bytes");
      bp::cuda::check_cuda(cudaMemsetAsync(block, 0xAB, capacity, device.stream()), "clearing");
      std::vector<unsigned char> source = pattern(size, static_cast<unsigned>(offset + size));
      const std::vector<unsigned char> expected = source;
      device.staging().to_device(device.stream(), block + offset, source.data(), size);
      std::fill(source.begin(), source.end(), 0);  // the copy has read it already
      std::vector<unsigned char> back(capacity);
      device.staging().to_host(device.stream(), back.data(), block, capacity);
      CHECK(std::memcmp(back.data() + offset, expected.data(), size) == 0);
      CHECK(std::all_of(back.begin(), back.begin() + static_cast<std::ptrdiff_t>(offset),
                        [](unsigned char b) { return b == 0xAB; }));
      CHECK(std::all_of(back.begin() + static_cast<std::ptrdiff_t>(offset + size), back.end(),
                        [](unsigned char b) { return b == 0xAB; }));
    }
  }
  device.allocator().release(block);
}

TEST_CASE("through the core: tensors and views with storage offsets round-trip exactly") {
  SKIP_WITHOUT_CUDA_DEVICE();
  const bp::Device gpu = cudatest::cuda_devices().front();
  std::vector<float> values(100003);
  std::iota(values.begin(), values.end(), -5.5f);
  const bp::Tensor host = bp::from_vector(values, {100003});
  const bp::Tensor on_gpu = host.to(gpu);
  CHECK(on_gpu.cpu().to_vector<float>() == values);
  // A contiguous view from an offset: the device-to-host copy starts mid-storage.
  const bp::Tensor tail = on_gpu.slice(0, 3, 100003);
  CHECK(tail.cpu().to_vector<float>() == std::vector<float>(values.begin() + 3, values.end()));
  // A strided view: made contiguous on the device first.
  const bp::Tensor every_third = on_gpu.slice(0, 1, 100003, 3);
  CHECK(every_third.cpu().to_vector<float>() ==
        host.slice(0, 1, 100003, 3).contiguous().to_vector<float>());
  // Into a view of a device tensor from the host.
  bp::Tensor target = bp::zeros({2, 100003}, bp::kFloat32, gpu);
  bp::Tensor row = target.select(0, 1);
  row.copy_(host);
  CHECK(target.select(0, 1).cpu().to_vector<float>() == values);
  CHECK(target.select(0, 0).sum().item<float>() == 0.0f);
}

TEST_CASE("through the core: tensors move between two GPUs") {
  SKIP_WITHOUT_TWO_CUDA_DEVICES();
  const std::vector<bp::Device> gpus = cudatest::cuda_devices();
  const bp::Tensor host = bp::randn({4096, 257}, bp::kFloat32);
  // Queued work on the first device still writes the source when the move starts.
  const bp::Tensor first = bp::mul(host.to(gpus[0]), 2);
  const bp::Tensor second = first.to(gpus[1]);
  cudatest::check_close(second, bp::mul(host, 2), 0);
}

}  // namespace
