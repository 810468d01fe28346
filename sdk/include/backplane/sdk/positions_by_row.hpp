// An index's positions grouped by the row each names, in the index's order within a row (a
// counting sort): what index_add and embedding's gradient add into each destination row, so that
// a kernel sums every row on its own, without atomics, in the same order on every backend and
// thread count.
#pragma once

#include <backplane/sdk/status.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace bp::plugin {

class PositionsByRow {
 public:
  // The positions of `index` (its values in row-major order), each naming a row in [0, rows); a
  // value out of that range is an error that names `op`.
  PositionsByRow(std::string_view op, std::span<const int64_t> index, int64_t rows)
      : starts_(static_cast<size_t>(rows) + 1), positions_(index.size()) {
    for (const int64_t row : index) {
      if (row < 0 || row >= rows) {
        throw Error(BP_STATUS_INVALID_ARGUMENT, std::string(op) + ": index " + std::to_string(row) +
                                                    " is out of range for a dimension of size " +
                                                    std::to_string(rows));
      }
      ++starts_[static_cast<size_t>(row) + 1];
    }
    for (size_t row = 1; row < starts_.size(); ++row) starts_[row] += starts_[row - 1];
    std::vector<int64_t> next(starts_.begin(), starts_.end() - 1);
    for (size_t i = 0; i < index.size(); ++i) {
      positions_[static_cast<size_t>(next[static_cast<size_t>(index[i])]++)] =
          static_cast<int64_t>(i);
    }
  }

  // The positions naming `row`, in increasing order.
  std::span<const int64_t> of(int64_t row) const {
    const auto r = static_cast<size_t>(row);
    return std::span<const int64_t>(positions_)
        .subspan(static_cast<size_t>(starts_[r]), static_cast<size_t>(starts_[r + 1] - starts_[r]));
  }

  // The same as two tables, for a kernel: row r's positions are positions()[starts()[r]] up to
  // (without) positions()[starts()[r + 1]]; starts() holds rows + 1 values.
  std::span<const int64_t> starts() const { return starts_; }
  std::span<const int64_t> positions() const { return positions_; }

 private:
  std::vector<int64_t> starts_;
  std::vector<int64_t> positions_;
};

}  // namespace bp::plugin
