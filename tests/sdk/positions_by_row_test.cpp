// PositionsByRow: an index's positions grouped by the row each names, in the index's order, and
// the error for a value out of range.
#include <backplane/sdk/positions_by_row.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace {

using bp::plugin::PositionsByRow;
using Values = std::vector<int64_t>;

Values as_vector(std::span<const int64_t> values) { return Values(values.begin(), values.end()); }

TEST_CASE("PositionsByRow lists each row's positions in the index's order") {
  const Values index = {2, 0, 2, 3, 0, 2};
  const PositionsByRow positions("index_add", index, 5);
  CHECK(as_vector(positions.of(0)) == Values{1, 4});
  CHECK(as_vector(positions.of(1)).empty());
  CHECK(as_vector(positions.of(2)) == Values{0, 2, 5});
  CHECK(as_vector(positions.of(3)) == Values{3});
  CHECK(as_vector(positions.of(4)).empty());
  INFO("the same as tables: row r's positions run from starts[r] to starts[r + 1]");
  CHECK(as_vector(positions.starts()) == Values{0, 2, 2, 5, 6, 6});
  CHECK(as_vector(positions.positions()) == Values{1, 4, 0, 2, 5, 3});
}

TEST_CASE("PositionsByRow of an empty index has every row empty") {
  const PositionsByRow positions("embedding_dense_backward", Values{}, 3);
  CHECK(as_vector(positions.starts()) == Values{0, 0, 0, 0});
  CHECK(positions.positions().empty());
}

TEST_CASE("PositionsByRow refuses a value out of range, naming the op and the size") {
  for (const int64_t bad : {int64_t{-1}, int64_t{3}}) {
    const Values index = {0, bad};
    try {
      PositionsByRow("index_add", index, 3);
      FAIL("no error for index " << bad);
    } catch (const bp::plugin::Error& error) {
      CHECK(error.code() == BP_STATUS_INVALID_ARGUMENT);
      CHECK(std::string(error.what()) == "index_add: index " + std::to_string(bad) +
                                             " is out of range for a dimension of size 3");
    }
  }
}

}  // namespace
