// Slices added into the rows an index names (index_add, and embedding's gradient), without
// atomics and in the same order on any thread count: the index's positions are grouped by the
// row they name (a counting sort, which keeps their order), and each destination row is then
// one thread's sum, its terms added in the order of the index.
#pragma once

#include "kernels/parallel_elements.h"
#include "kernels/strided_loop.h"
#include "runtime/thread_pool.h"

#include <backplane/sdk/wrapping_arithmetic.hpp>

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace bp::cpu {

// The positions of `index` (n values) grouped by the row in [0, rows) each names; a value out of
// that range is an error that names `op`.
class PositionsByRow {
 public:
  PositionsByRow(std::string_view op, const int64_t* index, int64_t n, int64_t rows)
      : starts_(static_cast<size_t>(rows) + 1), positions_(static_cast<size_t>(n)) {
    for (int64_t i = 0; i < n; ++i) {
      const int64_t row = index[i];
      if (row < 0 || row >= rows) {
        throw Error(BP_STATUS_INVALID_ARGUMENT,
                    std::string(op) + ": index " + std::to_string(row) +
                        " is out of range for a dimension of size " + std::to_string(rows));
      }
      ++starts_[static_cast<size_t>(row) + 1];
    }
    for (size_t row = 1; row < starts_.size(); ++row) starts_[row] += starts_[row - 1];
    std::vector<int64_t> next(starts_.begin(), starts_.end() - 1);
    for (int64_t i = 0; i < n; ++i) positions_[static_cast<size_t>(next[index[i]]++)] = i;
  }

  // The positions naming `row`, in increasing order.
  std::span<const int64_t> of(int64_t row) const {
    const auto r = static_cast<size_t>(row);
    return std::span<const int64_t>(positions_).subspan(
        static_cast<size_t>(starts_[r]), static_cast<size_t>(starts_[r + 1] - starts_[r]));
  }

 private:
  std::vector<int64_t> starts_;
  std::vector<int64_t> positions_;
};

// Contiguous tensors viewed as (outer, rows, inner) and (outer, n, inner): out's (o, r) slice =
// base's (o, r) slice (zeros where base is null) + the sum over the positions i naming r of
// scale(r) * source's (o, i) slice, the terms added in the order of i. Computed in C (float for
// the 16-bit floats) and rounded once; integers wrap. Split across threads by destination slice.
template <typename T, typename C, typename Scale>
void add_indexed_slices(T* out, const T* base, const T* source, int64_t outer, int64_t rows,
                        int64_t n, int64_t inner, const PositionsByRow& positions, Scale&& scale) {
  const int64_t slices = outer * rows;
  const int64_t terms_per_slice = rows == 0 ? 0 : n / rows + 1;
  parallel_for(slices, grain_for(inner * terms_per_slice), [&](int64_t begin, int64_t end) {
    constexpr int64_t kBlock = 256;
    C sums[kBlock];
    C values[kBlock];
    for (int64_t slice = begin; slice < end; ++slice) {
      const int64_t o = slice / rows;
      const int64_t row = slice % rows;
      const C factor = scale(row);
      for (int64_t first = 0; first < inner; first += kBlock) {
        const int64_t count = std::min(kBlock, inner - first);
        const int64_t at = slice * inner + first;
        if (base != nullptr) {
          convert_elements(base + at, sums, count);
        } else {
          std::fill_n(sums, count, C(0));
        }
        for (const int64_t i : positions.of(row)) {
          convert_elements(source + (o * n + i) * inner + first, values, count);
          for (int64_t j = 0; j < count; ++j) {
            sums[j] = wrapping(std::plus{}, sums[j], wrapping(std::multiplies{}, factor, values[j]));
          }
        }
        convert_elements(static_cast<const C*>(sums), out + at, count);
      }
    }
  });
}

}  // namespace bp::cpu
