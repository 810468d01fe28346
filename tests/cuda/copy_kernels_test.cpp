// The conversion and arange kernels (copy.cuh) on emulated launches (emulated_launch.h): every
// pair of dtypes converted as the CPU backend converts them, bit for bit, and arange in floating
// and integer dtypes with a stride.
#include "emulated_launch.h"

#include "kernels/copy.cuh"

#include "cuda_test_support.h"
#include "kernels/launch_layout.h"

#include <cstdint>
#include <cstring>
#include <vector>

namespace {

using bp::cuda::kElementwiseThreads;
using bp::cuda::emulated::small_device;

// Values every dtype holds or rounds: small, non-negative, some with fractions. The last lies
// just above a float16 tie once rounded to float: double to float16 through float rounds it to
// 1, directly to 1 + 2^-10.
const std::vector<double> kValues = {
    0, 1, 2.5, 3.75, 100, 0.1, 77.7, 126, 0.5, 1e-3, 64.25, 13, 1 + 0x1p-11 + 0x1p-40};

TEST_CASE("emulated conversion kernel: every pair of dtypes, as the CPU backend converts") {
  const std::vector<bp::DType> dtypes = {bp::kFloat32,  bp::kFloat64, bp::kFloat16,
                                         bp::kBFloat16, bp::kInt8,    bp::kUInt8,
                                         bp::kInt32,    bp::kInt64,   bp::kBool};
  const auto n = static_cast<int64_t>(kValues.size());
  bp::cuda::StridedShape<2> shape;
  shape.ndim = 1;
  shape.sizes[0] = n;
  shape.strides[0][0] = shape.strides[1][0] = 1;
  for (const bp::DType from : dtypes) {
    const bp::Tensor source = bp::from_vector(kValues, {n}).to(from);
    for (const bp::DType to : dtypes) {
      INFO(bp::dtype_name(from) << " to " << bp::dtype_name(to));
      const bp::Tensor expected = source.to(to).contiguous();
      const size_t bytes = static_cast<size_t>(n) * bp::element_size(to);
      std::vector<unsigned char> out(bytes, 0xAB);
      bp::cuda::emulated::launch(
          dim3(bp::cuda::grid_blocks(n, kElementwiseThreads, small_device())),
          dim3(kElementwiseThreads), 0,
          [&] { bp::cuda::convert_any(shape, n, out.data(), to, source.data_ptr(), from); });
      CHECK(std::memcmp(out.data(), expected.data_ptr(), bytes) == 0);
    }
  }
}

TEST_CASE("emulated arange kernel: start + i * step, strided, floating and integer") {
  std::vector<float> floats(40, -1.0f);
  bp::cuda::emulated::launch(dim3(1), dim3(kElementwiseThreads), 0, [&] {
    bp::cuda::arange_kernel<float, double>(floats.data(), 20, 2, 0.5, 0.25);
  });
  for (int i = 0; i < 40; ++i)
    CHECK(floats[static_cast<size_t>(i)] == (i % 2 == 0 ? 0.5f + 0.25f * (i / 2) : -1.0f));
  std::vector<int64_t> integers(300, -1);
  bp::cuda::emulated::launch(dim3(2), dim3(kElementwiseThreads), 0, [&] {
    bp::cuda::arange_kernel<int64_t, int64_t>(integers.data(), 300, 1, -7, 3);
  });
  for (int64_t i = 0; i < 300; ++i) CHECK(integers[static_cast<size_t>(i)] == -7 + 3 * i);
}

}  // namespace
