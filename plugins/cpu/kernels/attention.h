// Fused attention: softmax(query @ key^T * scale) @ value without the (L, S) score matrix. Each
// task takes a block of query rows of one (batch, head, ...) index and walks the keys in blocks,
// keeping a running maximum, sum and output per row (the online softmax), so the working set is
// a few tiles that stay in cache whatever the sequence length. Many rows copy each key and value
// block into tiles that row groups share; a few (a decoding step) read them in place.
#pragma once

#include "kernels/multiversion.h"
#include "kernels/prefetch.h"
#include "kernels/row_conversion.h"
#include "kernels/softmax_row.h"
#include "kernels/strided_loop.h"
#include "kernels/transcendental.h"
#include "kernels/vector_types.h"
#include "runtime/thread_pool.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace bp::cpu::attention {

// Query rows per task and keys per block. A tile of either, with E up to 256 floats, fits in
// L2 next to the output rows it accumulates into.
inline constexpr int64_t kQueryBlock = 96;
inline constexpr int64_t kKeyBlock = 64;
// Rows the score and output loops compute side by side, sharing each load of a key or value.
inline constexpr int64_t kRowsTogether = 3;
// A block of at most this many query rows (a decoding step, a group of grouped-query heads)
// reads each key and value row in place, where copying them into tiles costs more than the
// products.
inline constexpr int64_t kRowsInPlace = 8;

inline int64_t round_up(int64_t n, int64_t multiple) {
  return (n + multiple - 1) / multiple * multiple;
}

// Where index `index` of the flattened leading dims (all but the last two) of `view` starts.
inline int64_t leading_offset(const TensorView& view, int64_t index) {
  int64_t offset = 0;
  for (int64_t d = view.dim() - 3; d >= 0; --d) {
    offset += index % view.size(d) * view.stride(d);
    index /= view.size(d);
  }
  return offset;
}

// One matrix of a (leading index) slice: rows along dim -2, columns along dim -1.
template <typename T>
struct Matrix {
  T* data;
  int64_t row_stride;
  int64_t column_stride;

  Matrix(const TensorView& view, int64_t leading_index)
      : data(view.data<T>() + leading_offset(view, leading_index)),
        row_stride(view.stride(view.dim() - 2)),
        column_stride(view.stride(view.dim() - 1)) {}

  T& at(int64_t row, int64_t column) const {
    return data[row * row_stride + column * column_stride];
  }
};

// Tiles in the compute type C, padded with zeros to whole vectors (columns) and whole row
// groups, so that the inner loops have no tails. Allocated, zeroed, once per chunk of tasks:
// nothing writes the padding columns of key_t and value, and every key block writes or zeroes
// all kKeyBlock of its keys.
template <typename C>
struct Tiles {
  static constexpr int64_t kWidth = 4 * kLanesOf<C>;  // columns one inner-loop step covers

  int64_t embedding;        // E rounded up to kWidth
  int64_t value_embedding;  // Ev rounded up to kWidth
  std::vector<C> query;     // kQueryBlock x embedding, already scaled
  std::vector<C> key_t;     // embedding x kKeyBlock: the key block transposed
  std::vector<C> value;     // kKeyBlock x value_embedding
  std::vector<C> scores;    // kQueryBlock x kKeyBlock; becomes the probabilities in place
  std::vector<C> output;    // kQueryBlock x value_embedding, unnormalised
  std::vector<C> row_max;   // per query row, over the keys seen so far
  std::vector<C> row_sum;   // per query row, of e^(score - row_max)

  Tiles(int64_t e, int64_t ev)
      : embedding(round_up(e, kWidth)),
        value_embedding(round_up(ev, kWidth)),
        query(kQueryBlock * embedding),
        key_t(embedding * kKeyBlock),
        value(kKeyBlock * value_embedding),
        scores(kQueryBlock * kKeyBlock),
        output(kQueryBlock * value_embedding),
        row_max(kQueryBlock),
        row_sum(kQueryBlock) {}
};

// out[r][j] (+)= sum over i < depth of a[r][i] * b[i][j], for kRowsTogether rows r and kWidth
// columns j: the inner step of both products. Each load of a row of b feeds kRowsTogether
// multiply-adds, and kRowsTogether x 4 independent accumulators cover the multiply-add latency.
template <typename C>
void multiply_add_block(const C* a, int64_t a_stride, const C* b, int64_t b_stride, int64_t depth,
                        C* out, int64_t out_stride, bool accumulate) {
  constexpr int64_t kLanes = kLanesOf<C>;
  constexpr int64_t kVectors = Tiles<C>::kWidth / kLanes;
  Vector<C> sums[kRowsTogether][kVectors];
#pragma GCC unroll 16
  for (int64_t r = 0; r < kRowsTogether; ++r) {
#pragma GCC unroll 16
    for (int64_t v = 0; v < kVectors; ++v) {
      sums[r][v] = accumulate ? load_vector(out + r * out_stride + v * kLanes) : Vector<C>{};
    }
  }
  for (int64_t i = 0; i < depth; ++i) {
    Vector<C> row[kVectors];
#pragma GCC unroll 16
    for (int64_t v = 0; v < kVectors; ++v) row[v] = load_vector(b + i * b_stride + v * kLanes);
#pragma GCC unroll 16
    for (int64_t r = 0; r < kRowsTogether; ++r) {
      const Vector<C> factor = broadcast(a[r * a_stride + i]);
#pragma GCC unroll 16
      for (int64_t v = 0; v < kVectors; ++v) sums[r][v] += factor * row[v];
    }
  }
#pragma GCC unroll 16
  for (int64_t r = 0; r < kRowsTogether; ++r) {
#pragma GCC unroll 16
    for (int64_t v = 0; v < kVectors; ++v)
      store_vector(out + r * out_stride + v * kLanes, sums[r][v]);
  }
}

// scores[r] = query[r] . key_t for rows [0, rows) (a multiple of kRowsTogether).
template <typename C>
void block_scores(Tiles<C>& t, int64_t rows) {
  for (int64_t r = 0; r < rows; r += kRowsTogether) {
    for (int64_t c = 0; c < kKeyBlock; c += Tiles<C>::kWidth) {
      multiply_add_block(t.query.data() + r * t.embedding, t.embedding, t.key_t.data() + c,
                         kKeyBlock, t.embedding, t.scores.data() + r * kKeyBlock + c, kKeyBlock,
                         /*accumulate=*/false);
    }
  }
}

// output[r] += sum over c < keys of scores[r][c] * value[c], for rows [0, rows) (a multiple of
// kRowsTogether).
template <typename C>
void accumulate_values(Tiles<C>& t, int64_t rows, int64_t keys) {
  for (int64_t r = 0; r < rows; r += kRowsTogether) {
    for (int64_t e = 0; e < t.value_embedding; e += Tiles<C>::kWidth) {
      multiply_add_block(t.scores.data() + r * kKeyBlock, kKeyBlock, t.value.data() + e,
                         t.value_embedding, keys, t.output.data() + r * t.value_embedding + e,
                         t.value_embedding, /*accumulate=*/true);
    }
  }
}

// Folds one key block's scores of row r into its running maximum, sum and output; the scores
// become the block's unnormalised probabilities. Masked scores are -inf. A row whose scores so
// far include NaN or +inf has no defined softmax: its maximum becomes NaN and stays NaN, which
// the final division spreads over its whole output row, as the composite's softmax does.
template <typename C>
void online_softmax_row(Tiles<C>& t, int64_t r, int64_t keys) {
  C* scores = t.scores.data() + r * kKeyBlock;
  C* output = t.output.data() + r * t.value_embedding;
  const C old_max = t.row_max[r];
  if (std::isnan(old_max)) {
    std::fill_n(scores, kKeyBlock, C{0});
    return;
  }
  const C block_max = max_of(scores, keys);
  const C new_max = std::isnan(block_max) ? block_max : std::max(old_max, block_max);
  if (new_max == -std::numeric_limits<C>::infinity()) {  // every key so far is masked
    std::fill_n(scores, kKeyBlock, C{0});
    return;
  }
  if (!std::isfinite(new_max)) {
    t.row_max[r] = std::numeric_limits<C>::quiet_NaN();
    std::fill_n(scores, kKeyBlock, C{0});
    return;
  }
  const C rescale =
      old_max == -std::numeric_limits<C>::infinity() ? C{0} : exp_of(old_max - new_max);
  const double block_sum = exp_shifted_and_sum(scores, scores, keys, new_max, NextRows<C>{});
  std::fill(scores + keys, scores + kKeyBlock, C{0});
  t.row_max[r] = new_max;
  t.row_sum[r] = static_cast<C>(t.row_sum[r] * rescale + static_cast<C>(block_sum));
  if (rescale != C{1}) {
    for (int64_t e = 0; e < t.value_embedding; ++e) output[e] *= rescale;
  }
}

// Key and value rows read in place go kChunk elements at a time: 4 vectors in C, the row's own
// elements, or (16-bit floats) their conversion into a buffer that stays in L1.
template <typename C>
inline constexpr int64_t kChunk = 4 * kLanesOf<C>;

// query . key for a query row in C and a key row of T read in place, in 4 vectors of partial
// sums.
template <typename C, typename T>
C dot_with_key(const C* query, const T* key, int64_t n) {
  constexpr int64_t kLanes = kLanesOf<C>;
  int64_t e = 0;
  C total = 0;
  Vector<C> sums[4] = {};
  C converted[kChunk<C>];
  for (; e + kChunk<C> <= n; e += kChunk<C>) {
    const C* chunk = row_in_compute_type(key + e, kChunk<C>, kUnitStep, converted);
    for (int64_t v = 0; v < 4; ++v) {
      sums[v] += load_vector(query + e + v * kLanes) * load_vector(chunk + v * kLanes);
    }
  }
  const Vector<C> sum = (sums[0] + sums[1]) + (sums[2] + sums[3]);
  for (int64_t k = 0; k < kLanes; ++k) total += sum[k];
  for (; e < n; ++e) total += query[e] * static_cast<C>(key[e]);
  return total;
}

// One attention's sizes (L, S, E and Ev), whether it is causal, and the scale of its scores.
struct Problem {
  int64_t query_length, key_length, embedding, value_embedding;
  bool causal;
  double scale;
};

// The key block [first_key, first_key + keys) into key_t (transposed) and value, zeros past it.
template <typename T, typename C>
void load_tiles(Tiles<C>& t, const Matrix<const T>& key, const Matrix<const T>& value,
                int64_t first_key, int64_t keys, const Problem& p) {
  for (int64_t c = 0; c < keys; ++c) {
    for (int64_t e = 0; e < p.embedding; ++e) {
      t.key_t[e * kKeyBlock + c] = static_cast<C>(key.at(first_key + c, e));
    }
    for (int64_t e = 0; e < p.value_embedding; ++e) {
      t.value[c * t.value_embedding + e] = static_cast<C>(value.at(first_key + c, e));
    }
  }
  for (int64_t c = keys; c < kKeyBlock; ++c) {  // the previous block's tail, if any
    for (int64_t e = 0; e < p.embedding; ++e) t.key_t[e * kKeyBlock + c] = C{0};
    std::fill_n(t.value.data() + c * t.value_embedding, t.value_embedding, C{0});
  }
}

// scores[r][c] = query[r] . key[first_key + c] for rows [0, rows), each key row read once, in
// place (its elements consecutive).
template <typename T, typename C>
void scores_in_place(Tiles<C>& t, const Matrix<const T>& key, int64_t first_key, int64_t keys,
                     int64_t rows, int64_t embedding) {
  for (int64_t c = 0; c < keys; ++c) {
    const T* key_row = &key.at(first_key + c, 0);
    for (int64_t r = 0; r < rows; ++r) {
      t.scores[r * kKeyBlock + c] =
          dot_with_key(t.query.data() + r * t.embedding, key_row, embedding);
    }
  }
}

// output[e] += weight * values[e] for e < count, values read in C.
template <typename C, typename T>
void add_weighted(C* output, C weight, const T* values, int64_t count) {
  for (int64_t e = 0; e < count; ++e) output[e] += weight * static_cast<C>(values[e]);
}

// output[r] += sum over c < keys of scores[r][c] * value[first_key + c] for rows [0, rows), each
// value row read once, in place (its elements consecutive). Where T converts faster in blocks,
// each chunk of a value row is converted once for all the rows.
template <typename T, typename C>
void accumulate_values_in_place(Tiles<C>& t, const Matrix<const T>& value, int64_t first_key,
                                int64_t keys, int64_t rows, int64_t value_embedding) {
  for (int64_t c = 0; c < keys; ++c) {
    const T* value_row = &value.at(first_key + c, 0);
    int64_t e = 0;
    if constexpr (kConvertsFasterInBlocks<T>) {
      C converted[kChunk<C>];
      for (; e + kChunk<C> <= value_embedding; e += kChunk<C>) {
        const C* chunk = row_in_compute_type(value_row + e, kChunk<C>, kUnitStep, converted);
        for (int64_t r = 0; r < rows; ++r) {
          add_weighted(t.output.data() + r * t.value_embedding + e, t.scores[r * kKeyBlock + c],
                       chunk, kChunk<C>);
        }
      }
    }
    for (int64_t r = 0; r < rows; ++r) {
      add_weighted(t.output.data() + r * t.value_embedding + e, t.scores[r * kKeyBlock + c],
                   value_row + e, value_embedding - e);
    }
  }
}

// One task: query rows [first_row, first_row + rows) of leading index `leading`.
template <typename T, typename C>
BP_CPU_MULTIVERSIONED void attend_block(const Problem& p, Tiles<C>& t, const Matrix<const T>& query,
                                        const Matrix<const T>& key, const Matrix<const T>& value,
                                        const Matrix<T>& out, int64_t first_row, int64_t rows) {
  const int64_t padded_rows = round_up(rows, kRowsTogether);
  std::fill(t.query.begin(), t.query.end(), C{0});
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t e = 0; e < p.embedding; ++e) {
      t.query[r * t.embedding + e] =
          static_cast<C>(static_cast<C>(query.at(first_row + r, e)) * static_cast<C>(p.scale));
    }
  }
  std::fill(t.output.begin(), t.output.end(), C{0});
  std::fill(t.row_max.begin(), t.row_max.end(), -std::numeric_limits<C>::infinity());
  std::fill(t.row_sum.begin(), t.row_sum.end(), C{0});

  // The last row of the block attends to keys up to its own position when causal.
  const int64_t key_end = p.causal ? std::min(p.key_length, first_row + rows) : p.key_length;
  const bool rows_in_place =
      rows <= kRowsInPlace && key.column_stride == 1 && value.column_stride == 1;
  for (int64_t first_key = 0; first_key < key_end; first_key += kKeyBlock) {
    const int64_t keys = std::min(kKeyBlock, key_end - first_key);
    if (rows_in_place) {
      scores_in_place(t, key, first_key, keys, rows, p.embedding);
    } else {
      load_tiles(t, key, value, first_key, keys, p);
      block_scores(t, padded_rows);
    }
    for (int64_t r = 0; r < rows; ++r) {
      if (p.causal) {
        const int64_t visible = std::clamp<int64_t>(first_row + r - first_key + 1, 0, keys);
        std::fill(t.scores.data() + r * kKeyBlock + visible, t.scores.data() + r * kKeyBlock + keys,
                  -std::numeric_limits<C>::infinity());
      }
      online_softmax_row(t, r, keys);
    }
    if (rows_in_place) {
      accumulate_values_in_place(t, value, first_key, keys, rows, p.value_embedding);
    } else {
      for (int64_t r = rows; r < padded_rows; ++r)
        std::fill_n(t.scores.data() + r * kKeyBlock, kKeyBlock, C{0});
      accumulate_values(t, padded_rows, keys);
    }
  }

  for (int64_t r = 0; r < rows; ++r) {
    const C* output = t.output.data() + r * t.value_embedding;
    // No keys at all (S == 0): the composite's product with an empty value is 0.
    const C normaliser = key_end == 0               ? C{1}
                         : std::isnan(t.row_max[r]) ? t.row_max[r]
                                                    : t.row_sum[r];
    for (int64_t e = 0; e < p.value_embedding; ++e) {
      out.at(first_row + r, e) = static_cast<T>(output[e] / normaliser);
    }
  }
}

// Every task of one attention: query rows [first_row, first_row + kQueryBlock) of one leading
// index, split across the plugin's threads, `leading` indices of the flattened leading dims.
template <typename T>
void attend(const Problem& problem, int64_t leading, const TensorView& query, const TensorView& key,
            const TensorView& value, const TensorView& out) {
  using C = compute_t<T>;
  const int64_t row_blocks = (problem.query_length + kQueryBlock - 1) / kQueryBlock;
  // A task's cost grows with the keys it visits; a handful of tasks is worth a thread.
  parallel_for(leading * row_blocks, 1, [&](int64_t begin, int64_t end) {
    Tiles<C> tiles(problem.embedding, problem.value_embedding);
    for (int64_t task = begin; task < end; ++task) {
      const int64_t index = task / row_blocks;
      const int64_t first_row = task % row_blocks * kQueryBlock;
      attend_block<T, C>(problem, tiles, Matrix<const T>(query, index), Matrix<const T>(key, index),
                         Matrix<const T>(value, index), Matrix<T>(out, index), first_row,
                         std::min(kQueryBlock, problem.query_length - first_row));
    }
  });
}

}  // namespace bp::cpu::attention
