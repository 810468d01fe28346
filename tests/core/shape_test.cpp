// Shape arithmetic: dim wrapping, element counts, contiguous strides and broadcasting.
#include "core_test_support.h"

#include "tensor/shape.h"

using bp::DimVector;
using bp::detail::broadcast_shapes;
using bp::detail::checked_numel;
using bp::detail::contiguous_strides;
using bp::detail::is_expandable_to;
using bp::detail::wrap_dim;
using coretest::check_invalid_argument;

TEST_CASE(
    "wrap_dim maps negative dims from the end, and its errors name the op and the valid range") {
  CHECK(wrap_dim("sum", -1, 3) == 2);
  CHECK(wrap_dim("sum", -3, 3) == 0);
  CHECK(wrap_dim("sum", 2, 3) == 2);
  check_invalid_argument(
      [] { wrap_dim("softmax", 3, 2); },
      {"softmax: dim 3 is out of range for a tensor of 2 dims (expected -2..1)"});
  check_invalid_argument([] { wrap_dim("sum", -3, 2); }, {"sum: dim -3", "expected -2..1"});
}

TEST_CASE("wrap_dim accepts 0 and -1 for a 0-dim tensor only where scalars wrap") {
  CHECK(wrap_dim("sum", 0, 0) == 0);
  CHECK(wrap_dim("sum", -1, 0) == 0);
  check_invalid_argument([] { wrap_dim("argmax", 1, 0); }, {"argmax: dim 1", "tensor of 0 dims"});
  check_invalid_argument([] { wrap_dim("select", 0, 0, /*wrap_scalar=*/false); },
                         {"select: dim 0", "no dimensions"});
}

TEST_CASE("checked_numel counts elements and rejects negative sizes and overflow") {
  CHECK(checked_numel({2, 3, 4}, "test") == 24);
  CHECK(checked_numel({}, "test") == 1);
  CHECK(checked_numel({5, 0, 7}, "test") == 0);
  CHECK(checked_numel({int64_t{1} << 62, int64_t{1} << 62, 0}, "test") == 0);
  check_invalid_argument(
      [] {
        checked_numel({2, -1}, "empty");
      },
      {"empty: negative size -1 in shape [2, -1]"});
  check_invalid_argument(
      [] {
        checked_numel({int64_t{1} << 40, int64_t{1} << 40}, "empty");
      },
      {"empty: shape", "more than"});
}

TEST_CASE("contiguous_strides are row-major and treat size 0 like size 1") {
  CHECK(contiguous_strides({2, 3, 4}) == DimVector{12, 4, 1});
  CHECK(contiguous_strides({2, 0, 4}) == DimVector{4, 4, 1});
  CHECK(contiguous_strides({}) == DimVector{});
}

TEST_CASE("broadcast_shapes aligns trailing dims and stretches size 1, as PyTorch") {
  CHECK(broadcast_shapes({2, 3}, {3}) == DimVector{2, 3});
  CHECK(broadcast_shapes({4, 1, 3}, {2, 1}) == DimVector{4, 2, 3});
  CHECK(broadcast_shapes({}, {2, 2}) == DimVector{2, 2});
  CHECK(broadcast_shapes({1}, {0}) == DimVector{0});
  CHECK(broadcast_shapes({5, 1, 0}, {1, 7, 1}) == DimVector{5, 7, 0});
  check_invalid_argument(
      [] {
        broadcast_shapes({2, 3}, {4});
      },
      {"shapes [2, 3] and [4] cannot be broadcast",
       "size of tensor a (3) must match the size of tensor b (4) at "
       "non-singleton dimension 1"});
  check_invalid_argument([] { broadcast_shapes({3}, {0}); }, {"(3)", "(0)"});
}

TEST_CASE("is_expandable_to follows expand's rules") {
  CHECK(is_expandable_to({3}, {2, 3}));
  CHECK(is_expandable_to({1, 3}, {4, 3}));
  CHECK(is_expandable_to({}, {4, 3}));
  CHECK_FALSE(is_expandable_to({2, 3}, {3}));
  CHECK_FALSE(is_expandable_to({2}, {2, 3}));
}
