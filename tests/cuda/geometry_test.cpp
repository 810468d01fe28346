// The index arithmetic kernels use, checked on the host (it compiles for both): division by
// invariant integers, element offsets of strided shapes, and how shapes are split into groups.
#include "cuda_test_support.h"

#include "kernels/geometry.h"
#include "runtime/tensor_access.h"

#include <array>
#include <cstdint>
#include <random>
#include <vector>

namespace {

using bp::cuda::FastDivmod;
using bp::cuda::StridedShape;

TEST_CASE("fast division matches / for every divisor class and dividends up to 2^32 - 1") {
  std::vector<uint32_t> divisors = {1,
                                    2,
                                    3,
                                    5,
                                    7,
                                    10,
                                    255,
                                    256,
                                    257,
                                    1000,
                                    65535,
                                    65536,
                                    65537,
                                    (1u << 31) - 1,
                                    1u << 31,
                                    (1u << 31) + 1,
                                    UINT32_MAX - 1,
                                    UINT32_MAX};
  std::mt19937 random(7);
  for (int i = 0; i < 200; ++i) divisors.push_back(random() | 1u);
  for (int i = 0; i < 200; ++i) divisors.push_back(random() >> (random() % 32) | 1u);
  for (const uint32_t d : divisors) {
    const FastDivmod divider(d);
    std::vector<uint32_t> dividends = {
        0, 1, d - 1, d, UINT32_MAX, UINT32_MAX - 1, UINT32_MAX / d * d, UINT32_MAX / d * d - 1};
    if (d < UINT32_MAX / 3)
      dividends.insert(dividends.end(), {2 * d - 1, 2 * d, 2 * d + 1, 3 * d - 1});
    for (int i = 0; i < 500; ++i) dividends.push_back(static_cast<uint32_t>(random()));
    for (const uint32_t n : dividends) {
      INFO(n << " / " << d);
      REQUIRE(divider.divide(n) == n / d);
    }
  }
}

TEST_CASE("a divisor takes fast division below 2^32 and 64-bit division past it") {
  using bp::cuda::Divisor;
  for (const int64_t d :
       {int64_t{1}, int64_t{3}, int64_t{1000}, int64_t{UINT32_MAX}, int64_t{1} << 32}) {
    for (const int64_t limit :
         {int64_t{1} << 20, int64_t{1} << 32, (int64_t{1} << 32) + 1, int64_t{1} << 40}) {
      const Divisor divisor(d, limit);
      for (const int64_t n : {int64_t{0}, d - 1, d, 3 * d + 1, limit / 2, limit - 1}) {
        if (n < 0 || n >= limit) continue;
        INFO(n << " / " << d << ", dividends below " << limit);
        CHECK(divisor.divide(n) == n / d);
      }
    }
  }
}

// Offsets of row-major index i the slow way: coordinates innermost first.
template <int N>
std::array<int64_t, N> naive_offsets(const StridedShape<N>& shape, int64_t i) {
  std::array<int64_t, N> offsets{};
  for (int d = 0; d < shape.ndim; ++d) {
    const int64_t coordinate = i % shape.sizes[d];
    i /= shape.sizes[d];
    for (int k = 0; k < N; ++k) offsets[k] += coordinate * shape.strides[k][d];
  }
  return offsets;
}

TEST_CASE(
    "strided shapes give each operand's offset, with 32-bit and with 64-bit index arithmetic") {
  StridedShape<2> shape;
  shape.ndim = 4;
  const int64_t sizes[] = {3, 5, 7, 11};
  const int64_t strides[2][4] = {{1, 3, 15, 105}, {385, 77, 11, 1}};  // row-major and reversed
  for (int d = 0; d < 4; ++d) {
    shape.sizes[d] = sizes[d];
    shape.divisors[d] = FastDivmod(static_cast<uint32_t>(sizes[d]));
    shape.strides[0][d] = strides[0][d];
    shape.strides[1][d] = strides[1][d];
  }
  for (const bool wide : {false, true}) {
    shape.wide = wide;
    for (int64_t i = 0; i < 3 * 5 * 7 * 11; ++i) {
      int64_t at[2];
      shape.offsets(i, at);
      const auto expected = naive_offsets(shape, i);
      REQUIRE(at[0] == expected[0]);
      REQUIRE(at[1] == expected[1]);
    }
  }
  // Past 2^32 elements, the wide path: two dimensions of 2^20 and 2^13 + 1.
  StridedShape<1> big;
  big.ndim = 2;
  big.wide = true;
  big.sizes[0] = int64_t{1} << 20;
  big.sizes[1] = (int64_t{1} << 13) + 1;
  big.strides[0][0] = 3;
  big.strides[0][1] = 5;
  const int64_t last = big.sizes[0] * big.sizes[1] - 1;
  int64_t at[1];
  big.offsets(last, at);
  CHECK(at[0] == (big.sizes[0] - 1) * 3 + (big.sizes[1] - 1) * 5);
}

TEST_CASE("group shapes merge what they can and say which members are dense") {
  using bp::cuda::group_shape;
  const std::vector<int64_t> sizes = {4, 6, 8};
  bp::plugin::DimValues<bool> last(3, false);
  last[2] = true;
  const std::vector<int64_t> input = {48, 8, 1}, out = {6, 1, 0};
  const auto rows = group_shape<2>("sum", sizes, last, {input, out});
  CHECK(rows.groups == 24);
  CHECK(rows.group_size == 8);
  CHECK(rows.kept.ndim == 1);  // 4 x 6 merge into 24
  CHECK(rows.dense_members[0]);
  CHECK_FALSE(rows.dense_members[1]);  // stride 0: every member maps to the same output

  bp::plugin::DimValues<bool> first(3, false);
  first[0] = true;
  const auto columns = group_shape<2>("sum", sizes, first, {input, std::vector<int64_t>{0, 8, 1}});
  CHECK(columns.groups == 48);
  CHECK(columns.group_size == 4);
  CHECK_FALSE(columns.dense_members[0]);
  CHECK(columns.kept.strides[0][0] == 1);

  // Nine reduced dimensions that cannot merge.
  const std::vector<int64_t> many(9, 2), scattered = {1, 3, 9, 27, 81, 243, 729, 2187, 6561};
  bp::plugin::DimValues<bool> all(9, true);
  try {
    group_shape<2>("sum", many, all, {scattered, std::vector<int64_t>(9, 0)});
    FAIL("no error");
  } catch (const bp::plugin::Error& e) {
    CHECK(e.code() == BP_STATUS_UNIMPLEMENTED);
    CHECK(std::string(e.what()).find("make it contiguous first") != std::string::npos);
  }
}

}  // namespace
