// The gather kernel of embedding and index_select (gather.cuh) on emulated launches
// (emulated_launch.h): rows picked by index, and an index out of range recorded, not read from.
#include "emulated_launch.h"

#include "kernels/gather.cuh"

#include "cuda_test_support.h"
#include "kernels/launch_layout.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace {

using bp::cuda::emulated::small_device;

// out (indices x columns) = src[index[i], :], src (rows x columns); operands: out, src with the
// picked dimension left out, the index. Returns the index out of range that the launch reports,
// read where launch_gather reads it.
std::optional<int64_t> run_gather(std::vector<float>& out, const std::vector<float>& src,
                                  const std::vector<int64_t>& index, int64_t rows,
                                  int64_t columns) {
  const auto picks = static_cast<int64_t>(index.size());
  bp::cuda::StridedShape<3> shape;
  shape.ndim = 2;
  shape.sizes[0] = columns, shape.sizes[1] = picks;  // innermost first
  shape.divisors[0] = bp::cuda::FastDivmod(static_cast<uint32_t>(columns));
  const int64_t strides[3][2] = {{1, columns}, {1, 0}, {0, 1}};
  for (int k = 0; k < 3; ++k) {
    for (int d = 0; d < 2; ++d) shape.strides[k][d] = strides[k][d];
  }
  const int64_t n = picks * columns;
  bp::cuda::IndexError error{bp::cuda::kNoIndexError};
  bp::cuda::emulated::launch(
      dim3(bp::cuda::grid_blocks(n, bp::cuda::kElementwiseThreads, small_device())),
      dim3(bp::cuda::kElementwiseThreads), 0, [&] {
        bp::cuda::gather<float>(shape, n, out.data(), src.data(), index.data(), columns, rows,
                                &error);
      });
  if (error.first_position == bp::cuda::kNoIndexError) return std::nullopt;
  return index[static_cast<size_t>(bp::cuda::index_offset_at(shape, error.first_position))];
}

TEST_CASE(
    "emulated gather kernel: rows picked by index, and an index out of range recorded, not read") {
  constexpr int64_t kRows = 10, kColumns = 7;
  std::vector<float> src(kRows * kColumns);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<float>(i);
  const std::vector<int64_t> index = {3, 0, 9, 3, 5};
  std::vector<float> out(index.size() * kColumns, -1.0f);
  CHECK(run_gather(out, src, index, kRows, kColumns) == std::nullopt);
  for (size_t i = 0; i < index.size(); ++i) {
    for (int64_t c = 0; c < kColumns; ++c) {
      CHECK(out[i * kColumns + static_cast<size_t>(c)] ==
            src[static_cast<size_t>(index[i] * kColumns + c)]);
    }
  }
  // One index past the rows: reported, its row of out left as it was, the others picked.
  const std::vector<int64_t> bad = {2, kRows, 4};
  std::vector<float> partial(bad.size() * kColumns, -1.0f);
  CHECK(run_gather(partial, src, bad, kRows, kColumns) == kRows);
  for (int64_t c = 0; c < kColumns; ++c) {
    CHECK(partial[static_cast<size_t>(c)] == src[static_cast<size_t>(2 * kColumns + c)]);
    CHECK(partial[static_cast<size_t>(kColumns + c)] == -1.0f);
    CHECK(partial[static_cast<size_t>(2 * kColumns + c)] ==
          src[static_cast<size_t>(4 * kColumns + c)]);
  }
}

TEST_CASE(
    "emulated gather kernel: of several indices out of range, the first is reported, as on the CPU "
    "backend") {
  // Every thread of several blocks meets a bad index; whichever runs first, the report names the
  // first one in index order.
  constexpr int64_t kRows = 4, kColumns = 3;
  const std::vector<float> src(kRows * kColumns, 1.0f);
  std::vector<int64_t> index(700);
  for (size_t i = 0; i < index.size(); ++i) index[i] = static_cast<int64_t>(i % kRows);
  index[123] = -7;
  index[124] = kRows;
  index[400] = -1;
  index[699] = 1000;
  for (int run = 0; run < 3; ++run) {
    std::vector<float> out(index.size() * kColumns, 0.0f);
    CHECK(run_gather(out, src, index, kRows, kColumns) == -7);
  }
  index[123] = 2;
  std::vector<float> out(index.size() * kColumns, 0.0f);
  CHECK(run_gather(out, src, index, kRows, kColumns) == kRows);
}

}  // namespace
