// View ops: metadata over the same storage, with errors that name the op and the shapes.
#include "core_test_support.h"

#include <limits>

using namespace bp;
using coretest::check_invalid_argument;
using coretest::shape_of;
using Shape = std::vector<int64_t>;

namespace {

// 0, 1, 2, ... as Float32 in `sizes`.
Tensor iota(IntArrayRef sizes) {
  const int64_t numel = empty(sizes).numel();
  std::vector<float> values(static_cast<size_t>(numel));
  for (int64_t i = 0; i < numel; ++i) values[i] = static_cast<float>(i);
  return from_vector(values, sizes);
}

bool shares_storage(const Tensor& a, const Tensor& b) {
  return a.impl()->storage().get() == b.impl()->storage().get();
}

}  // namespace

TEST_CASE("view infers one -1 and reads the same storage") {
  const Tensor t = iota({2, 6});
  const Tensor v = t.view({3, -1});
  CHECK(shape_of(v) == Shape{3, 4});
  CHECK(shares_storage(v, t));
  CHECK(v.to_vector<float>() == t.to_vector<float>());
  CHECK(shape_of(iota({1, 1}).view({})) == Shape{});
}

TEST_CASE("view rejects shapes that do not fit and strides it cannot express") {
  const Tensor t = iota({2, 3});
  check_invalid_argument(
      [&] {
        t.view({4, 2});
      },
      {"view: shape [4, 2] is invalid for a tensor of 6 elements"});
  check_invalid_argument([&] { t.view({-1, -1}); }, {"only one dimension can be inferred"});
  check_invalid_argument([&] { t.view({-2, 3}); }, {"invalid size -2"});
  check_invalid_argument(
      [&] { t.transpose(0, 1).view({6}); },
      {"view: shape [6] is not compatible", "strides [1, 3]", "use .reshape(...) instead"});
  check_invalid_argument([] { iota({0, 3}).view({-1, 0}); }, {"cannot infer the -1"});
  check_invalid_argument(
      [&] {
        t.view({int64_t{1} << 32, int64_t{1} << 32, -1});
      },
      {"view: shape [4294967296, 4294967296, -1] has more than"});
}

TEST_CASE("view keeps size-1 and split dims of a non-contiguous tensor when it can") {
  const Tensor t = iota({4, 6}).slice(1, 0, 6, 2);  // [4, 3], strides [6, 2]
  const Tensor v = t.view({2, 2, 3});
  CHECK(v.strides().vec() == Shape{12, 6, 2});
  CHECK(v.to_vector<float>() == t.to_vector<float>());
}

TEST_CASE("reshape is a view when it can be and a contiguous copy otherwise") {
  const Tensor t = iota({2, 3});
  CHECK(shares_storage(t.reshape({3, 2}), t));
  const Tensor transposed = t.transpose(0, 1);
  const Tensor copied = transposed.reshape({6});
  CHECK_FALSE(shares_storage(copied, t));
  CHECK(copied.to_vector<float>() == std::vector<float>{0, 3, 1, 4, 2, 5});
  check_invalid_argument([&] { t.reshape({5}); }, {"reshape: shape [5] is invalid"});
}

TEST_CASE("permute reorders dims and rejects repeats and wrong counts") {
  const Tensor t = iota({2, 3, 4});
  const Tensor p = t.permute({2, 0, -2});
  CHECK(shape_of(p) == Shape{4, 2, 3});
  CHECK(p.strides().vec() == Shape{1, 12, 4});
  check_invalid_argument([&] { t.permute({0, 1}); }, {"permute", "has 2 entries", "3 dims"});
  check_invalid_argument([&] { t.permute({0, 0, 1}); }, {"permute", "more than once"});
  check_invalid_argument([&] { t.permute({0, 1, 3}); }, {"dim 3 is out of range"});
}

TEST_CASE("transpose swaps two dims") {
  const Tensor t = iota({2, 3});
  const Tensor tt = t.transpose(-1, 0);
  CHECK(shape_of(tt) == Shape{3, 2});
  CHECK(tt.contiguous().to_vector<float>() == std::vector<float>{0, 3, 1, 4, 2, 5});
  CHECK(shape_of(empty({}).transpose(0, -1)) == Shape{});
}

TEST_CASE("slice takes negative and clamped bounds and a positive step") {
  const Tensor t = iota({10});
  CHECK(t.slice(0, 2, 5).to_vector<float>() == std::vector<float>{2, 3, 4});
  CHECK(t.slice(0, -3, 100).to_vector<float>() == std::vector<float>{7, 8, 9});
  CHECK(t.slice(0, 1, -1, 3).to_vector<float>() == std::vector<float>{1, 4, 7});
  CHECK(t.slice(0, -100, 2).to_vector<float>() == std::vector<float>{0, 1});
  CHECK(t.slice(0, 6, 3).numel() == 0);
  const Tensor columns = iota({3, 4}).slice(1, 1, 4, 2);
  CHECK(shape_of(columns) == Shape{3, 2});
  CHECK(columns.contiguous().to_vector<float>() == std::vector<float>{1, 3, 5, 7, 9, 11});
  check_invalid_argument([&] { t.slice(0, 0, 5, 0); }, {"slice: step must be positive, got 0"});
  check_invalid_argument([&] { t.slice(0, 0, 5, -1); }, {"step must be positive, got -1"});
  check_invalid_argument([&] { t.slice(1, 0, 5); }, {"dim 1 is out of range"});
  // A step larger than the dim takes the first element, and nothing overflows.
  CHECK(t.slice(0, 3, 10, std::numeric_limits<int64_t>::max()).to_vector<float>() ==
        std::vector<float>{3});
}

TEST_CASE("slice without bounds runs from the start or to the end of the dim") {
  const Tensor t = iota({2, 5});
  CHECK(shape_of(t.slice()) == Shape{2, 5});
  CHECK(t.slice(1, std::nullopt, 2).contiguous().to_vector<float>() ==
        std::vector<float>{0, 1, 5, 6});
  CHECK(t.slice(1, 3).contiguous().to_vector<float>() == std::vector<float>{3, 4, 8, 9});
  CHECK(bp::slice(t, -1, std::nullopt, std::nullopt, 2).contiguous().to_vector<float>() ==
        std::vector<float>{0, 2, 4, 5, 7, 9});
}

TEST_CASE("select removes a dim and checks the index") {
  const Tensor t = iota({3, 4});
  CHECK(t.select(0, 1).to_vector<float>() == std::vector<float>{4, 5, 6, 7});
  CHECK(t.select(1, -1).to_vector<float>() == std::vector<float>{3, 7, 11});
  CHECK(t.select(0, 2).select(0, 3).item<float>() == 11.0f);
  check_invalid_argument([&] { t.select(0, 3); },
                         {"select: index 3 is out of range for dim 0 of size 3 (expected -3..2)"});
  check_invalid_argument([&] { t.select(1, -5); }, {"index -5"});
}

TEST_CASE("expand broadcasts size-1 dims with stride 0 and adds leading dims") {
  const Tensor column = iota({3, 1});
  const Tensor e = column.expand({2, -1, 4});
  CHECK(shape_of(e) == Shape{2, 3, 4});
  CHECK(e.strides().vec() == Shape{0, 1, 0});
  CHECK(shares_storage(e, column));
  CHECK(e.select(0, 1).select(0, 2).to_vector<float>() == std::vector<float>{2, 2, 2, 2});
  CHECK(shape_of(empty({}).expand({2, 2})) == Shape{2, 2});
  CHECK(shape_of(empty({0, 1}).expand({0, 5})) == Shape{0, 5});
}

TEST_CASE("expand refuses non-singleton mismatches, -1 in new dims and fewer dims") {
  const Tensor t = iota({2, 3});
  check_invalid_argument(
      [&] {
        t.expand({2, 4});
      },
      {"expand: the expanded size 4 must match the existing size 3 at "
       "non-singleton dim 1",
       "target shape [2, 4]", "tensor shape [2, 3]"});
  check_invalid_argument([&] { t.expand({-1, 2, 3}); }, {"-1", "new leading dim 0"});
  check_invalid_argument([&] { t.expand({3}); }, {"fewer dims"});
  check_invalid_argument([&] { t.expand({2, -3}); }, {"invalid size -3"});
  // More elements than int64 counts would wrap to a count reductions believe.
  check_invalid_argument(
      [] {
        ones({1}).expand({int64_t{1} << 32, int64_t{1} << 32});
      },
      {"expand: shape [4294967296, 4294967296] has more than"});
}

TEST_CASE("squeeze drops size-1 dims, all of them or the one named") {
  const Tensor t = empty({1, 3, 1, 2});
  CHECK(shape_of(t.squeeze()) == Shape{3, 2});
  CHECK(shape_of(t.squeeze(2)) == Shape{1, 3, 2});
  CHECK(shape_of(t.squeeze(-3)) == Shape{1, 3, 1, 2});  // size 3: unchanged
  CHECK(shape_of(empty({}).squeeze(0)) == Shape{});
  check_invalid_argument([&] { t.squeeze(4); },
                         {"squeeze: dim 4 is out of range for a tensor of 4 dims"});
}

TEST_CASE("unsqueeze inserts a size-1 dim at any of dim()+1 positions") {
  const Tensor t = iota({2, 3});
  CHECK(shape_of(t.unsqueeze(0)) == Shape{1, 2, 3});
  CHECK(shape_of(t.unsqueeze(-1)) == Shape{2, 3, 1});
  CHECK(shape_of(t.unsqueeze(1)) == Shape{2, 1, 3});
  CHECK(t.unsqueeze(1).strides().vec() == Shape{3, 3, 1});
  CHECK(shape_of(empty({}).unsqueeze(0)) == Shape{1});
  check_invalid_argument([&] { t.unsqueeze(3); },
                         {"unsqueeze: dim 3 is out of range for a tensor of 3 dims"});
}

TEST_CASE("flatten gives one dim, copying only when the layout needs it") {
  const Tensor t = iota({2, 3});
  CHECK(shares_storage(t.flatten(), t));
  CHECK(t.transpose(0, 1).flatten().to_vector<float>() == std::vector<float>{0, 3, 1, 4, 2, 5});
  CHECK(shape_of(empty({}).flatten()) == Shape{1});
}

TEST_CASE("flatten joins the dims from start_dim to end_dim") {
  const Tensor t = iota({2, 3, 4, 5});
  CHECK(shape_of(t.flatten(1)) == Shape{2, 60});
  CHECK(shape_of(t.flatten(1, 2)) == Shape{2, 12, 5});
  CHECK(shape_of(bp::flatten(t, 0, -2)) == Shape{24, 5});
  CHECK(shares_storage(t.flatten(1, 2), t));
  CHECK(t.flatten(2, 2).impl() == t.impl());  // one dim joined with itself: the tensor itself
  CHECK(shape_of(empty({}).flatten(0, -1)) == Shape{1});
  check_invalid_argument(
      [&] { t.flatten(2, 1); },
      {"flatten: start_dim 2 comes after end_dim 1 (dims 2 and 1 of a tensor of shape [2, 3, 4, "
       "5])"});
  check_invalid_argument([&] { t.flatten(4); },
                         {"flatten: dim 4 is out of range for a tensor of 4 dims"});
}
