// The batched transpose kernel (transpose.cuh) on emulated launches (emulated_launch.h): every
// element width, matrices that are and are not whole tiles, more tiles than blocks (the
// grid-stride walk), strided sources and targets, and nothing written outside the target's
// elements.
#include "emulated_launch.h"

#include "kernels/launch_layout.h"
#include "kernels/transpose.cuh"

#include "cuda_test_support.h"

#include <cstdint>
#include <vector>

namespace {

using bp::cuda::TransposeShape;

template <typename Bits>
void check_transpose(const TransposeShape& shape) {
  INFO(sizeof(Bits) << "-byte elements, " << shape.batches << " x " << shape.rows << " x "
                    << shape.cols << ", source strides " << shape.in_batch_stride << ", "
                    << shape.in_row_stride << ", target strides " << shape.out_batch_stride << ", "
                    << shape.out_row_stride);
  std::vector<Bits> in(static_cast<size_t>(shape.batches * shape.in_batch_stride));
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<Bits>(i * 7 + 3);
  const Bits untouched = static_cast<Bits>(0xA5A5A5A5A5A5A5A5ull);
  std::vector<Bits> out(static_cast<size_t>(shape.batches * shape.out_batch_stride), untouched);
  const bp::cuda::TransposeTiles tiles = bp::cuda::transpose_tiles(shape);
  const bp::cuda::LaunchTarget device = bp::cuda::emulated::small_device();
  bp::cuda::emulated::launch(
      dim3(bp::cuda::grid_blocks(tiles.count, 1, device, 8)),
      dim3(bp::cuda::kTransposeTile, bp::cuda::kTransposeTileRowsPerPass), 0,
      [&] { bp::cuda::transpose_kernel<Bits>(in.data(), out.data(), tiles); });
  std::vector<bool> written(out.size(), false);
  int64_t wrong = 0;
  for (int64_t b = 0; b < shape.batches; ++b) {
    for (int64_t r = 0; r < shape.rows; ++r) {
      for (int64_t c = 0; c < shape.cols; ++c) {
        const auto at =
            static_cast<size_t>(b * shape.out_batch_stride + c * shape.out_row_stride + r);
        written[at] = true;
        if (out[at] !=
            in[static_cast<size_t>(b * shape.in_batch_stride + r * shape.in_row_stride + c)]) {
          ++wrong;
        }
      }
    }
  }
  CHECK(wrong == 0);
  int64_t stray = 0;
  for (size_t i = 0; i < out.size(); ++i) stray += !written[i] && out[i] != untouched;
  CHECK(stray == 0);
}

TEST_CASE("emulated transpose kernel: every width, partial tiles, strided source and target") {
  // Dense: NCHW -> NHWC as conv2d's channels-last formulation moves its input, and back.
  const std::vector<TransposeShape> shapes = {
      {2, 3, 70, 3 * 70, 70, 70 * 3, 3},      // 3 channels of 70 pixels: one partial tile row
      {3, 33, 31, 33 * 31, 31, 31 * 33, 33},  // past one tile by one row, short of it in cols
      {1, 64, 32, 64 * 32, 32, 32 * 64, 64},  // whole tiles
      {1, 1, 1, 1, 1, 1, 1},                  // one element
      {2, 40, 45, 40 * 50 + 7, 50, 45 * 41 + 3, 41},  // strided rows and batches on both sides
  };
  for (const TransposeShape& shape : shapes) {
    check_transpose<uint8_t>(shape);
    check_transpose<uint16_t>(shape);
    check_transpose<uint32_t>(shape);
    check_transpose<uint64_t>(shape);
  }
}

}  // namespace
