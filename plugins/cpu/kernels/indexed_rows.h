// Slices added into the rows an index names (index_add, and embedding's gradient), without
// atomics and in the same order on any thread count: the index's positions are grouped by the
// row they name (bp::plugin::PositionsByRow, a counting sort that keeps their order), and each
// destination row is then one thread's sum, its terms added in the order of the index.
#pragma once

#include "kernels/parallel_elements.h"
#include "kernels/strided_loop.h"
#include "runtime/thread_pool.h"

#include <backplane/sdk/positions_by_row.hpp>
#include <backplane/sdk/wrapping_arithmetic.hpp>

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace bp::cpu {

// Contiguous tensors viewed as (outer, rows, inner) and (outer, n, inner): out's (o, r) slice =
// base's (o, r) slice (zeros where base is null) + the sum over the positions i naming r of
// scale(r) * source's (o, i) slice, the terms added in the order of i. Computed in C (float for
// the 16-bit floats) and rounded once; integers wrap. Split across threads by destination slice.
template <typename T, typename C, typename Scale>
void add_indexed_slices(T* out, const T* base, const T* source, int64_t outer, int64_t rows,
                        int64_t n, int64_t inner, const plugin::PositionsByRow& positions,
                        Scale&& scale) {
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
            const C term = wrapping(std::multiplies{}, factor, values[j]);
            sums[j] = wrapping(std::plus{}, sums[j], term);
          }
        }
        convert_elements(static_cast<const C*>(sums), out + at, count);
      }
    }
  });
}

}  // namespace bp::cpu
