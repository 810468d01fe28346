// Fused attention in the manner of FlashAttention-2: a block of 4 warps takes 64 query rows of
// one problem, each warp 16 of them, and walks the keys in blocks of 64, staged with their values
// in shared memory (cp.async, the next block loading while this one is used). Each warp computes
// its scores S = Q K^T on the tensor cores (mma.sync m16n8k16, float accumulators), folds them
// into a running maximum and sum per row (the online softmax, in float and in base 2, on scores
// prescaled by log2(e)), rescales its output accumulator and adds P V, on the tensor cores again.
// The (L x S) score matrix never exists. Causal blocks skip the key blocks past their last row
// and mask only the blocks that cross the diagonal; keys past S are masked and read as zeros.
//
// Fragment layouts, as the PTX ISA gives them for mma.m16n8k16 with .f16 or .bf16 inputs and
// .f32 accumulators, for lane l with g = l / 4 and t = l % 4 (a register holds two 16-bit
// elements, the one of lower column or row in its low half):
//   A (16 x 16, row major): register 0 holds row g, columns 2t and 2t + 1; register 1 row g + 8,
//     the same columns; registers 2 and 3 the same two rows at columns 2t + 8 and 2t + 9.
//   B (16 x 8, k by n): register 0 holds column g, rows 2t and 2t + 1; register 1 column g,
//     rows 2t + 8 and 2t + 9.
//   C and D (16 x 8, float): elements 0 and 1 are row g, columns 2t and 2t + 1; elements 2 and 3
//     row g + 8, the same columns.
// ldmatrix .x4 loads four 8 x 8 matrices of 16-bit elements, lanes 8i .. 8i + 7 giving the
// addresses of matrix i's rows 0 .. 7; lane l receives in register i the elements of matrix i at
// row l / 4, columns 2 (l % 4) and 2 (l % 4) + 1, or, with .trans, at rows 2 (l % 4) and
// 2 (l % 4) + 1 of column l / 4.
//
// The block's program is written against `Lane`, one thread's access to what the hardware does
// for a warp or a block (the copies, the barriers, ldmatrix, mma, shuffles): attention.cu gives it
// the PTX instructions, and the host tests an emulation of them with one host thread per lane, so
// that the host compiler runs this very code.
#pragma once

#include "kernels/geometry.h"
#include "kernels/host_device.h"
#include "kernels/launch.h"
#include "kernels/launch_layout.h"
#include "kernels/vector_alignment.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

namespace bp::cuda {

inline constexpr int kAttentionWarps = 4;
inline constexpr int kAttentionThreads = kAttentionWarps * kWarpSize;
inline constexpr int kAttentionWarpRows = 16;  // M of one mma: each warp's query rows
inline constexpr int kAttentionQueryBlock = kAttentionWarps * kAttentionWarpRows;
inline constexpr int kAttentionKeyBlock = 64;

static_assert(kAttentionQueryBlock == kAttentionKeyBlock,
              "query, key and value tiles share one shape");
static_assert(kAttentionRowAlignment == kVectorBytes, "rows are copied in 16-byte vectors");

// A 64-row tile of one operand in shared memory, its rows padded by one 16-byte vector so that the
// eight rows an ldmatrix reads, a pitch apart, start in eight different groups of four banks.
template <typename T, int HeadDim>
struct AttentionTile {
  static constexpr int kRows = kAttentionKeyBlock;
  static constexpr int kVector = kVectorWidth<T>;  // elements of one 16-byte vector
  static constexpr int kPitch = HeadDim + kVector;
  static constexpr int kElements = kRows * kPitch;
  static constexpr int kVectorsPerRow = HeadDim / kVector;
};

// Shared memory holds the query tile, then two key tiles and two value tiles (double buffering).
template <typename T, int HeadDim>
inline constexpr size_t kAttentionSharedBytes = 5 * AttentionTile<T, HeadDim>::kElements *
                                                sizeof(T);

// Lanes 4g .. 4g + 3 hold the columns of fragment row g between them; each gets the combination
// of all four.
template <typename Lane, typename Combine>
BP_CUDA_HOST_DEVICE float across_row(Lane& lane, float value, Combine combine) {
  value = combine(value, lane.shuffle_xor(value, 1));
  return combine(value, lane.shuffle_xor(value, 2));
}

// Rows [first, first + 64) of a matrix into a shared tile, asynchronously (one vector per thread
// per step, consecutive threads along a row). Rows from `rows` on become zeros: keys past S then
// add exact zeros to P V (a probability of 0 times a stale NaN would not), and query rows past L
// stay finite.
template <typename T, int HeadDim, typename Lane>
BP_CUDA_HOST_DEVICE void load_attention_tile(Lane& lane, T* tile, const T* matrix,
                                             int64_t row_stride, int64_t first, int64_t rows) {
  using Tile = AttentionTile<T, HeadDim>;
  constexpr int kVectors = Tile::kRows * Tile::kVectorsPerRow;
  static_assert(kVectors % kAttentionThreads == 0);
#pragma unroll
  for (int i = 0; i < kVectors / kAttentionThreads; ++i) {
    const int vector = lane.thread() + i * kAttentionThreads;
    const int row = vector / Tile::kVectorsPerRow;
    const int column = vector % Tile::kVectorsPerRow * Tile::kVector;
    const bool inside = first + row < rows;
    // The matrix's first row stands in where nothing is read, so that the address stays valid.
    const T* source = inside ? matrix + (first + row) * row_stride + column : matrix;
    lane.copy_async(tile + row * Tile::kPitch + column, source, inside);
  }
}

// One thread's part of a block's work: query block `block_index / shape.batches` counted from
// the last, of problem `block_index % shape.batches`. `shared` holds kAttentionSharedBytes.
template <typename T, int HeadDim, typename Lane>
BP_CUDA_HOST_DEVICE void attend_query_block(Lane& lane, const AttentionShape& shape, const T* query,
                                            const T* key, const T* value, T* out, float scale_log2,
                                            uint32_t block_index, T* shared) {
  using Tile = AttentionTile<T, HeadDim>;
  constexpr int kStep = 16;        // K of one mma
  constexpr int kTileColumns = 8;  // N of one mma
  // One ldmatrix .x4 covers a 16 x 16 square: two mma tiles of 8 columns, or one step of 16.
  constexpr int kSquare = 16;
  constexpr int kEmbeddingSteps = HeadDim / kStep;                // K steps of Q K^T
  constexpr int kScoreTiles = kAttentionKeyBlock / kTileColumns;  // N tiles of S
  constexpr int kKeySteps = kAttentionKeyBlock / kStep;           // K steps of P V
  constexpr int kOutTiles = HeadDim / kTileColumns;               // N tiles of O
  constexpr float kMasked = -std::numeric_limits<float>::infinity();

  T* const query_tile = shared;
  T* const key_tiles = query_tile + Tile::kElements;
  T* const value_tiles = key_tiles + 2 * Tile::kElements;

  const int warp = lane.thread() / kWarpSize;
  const int lane_index = lane.thread() % kWarpSize;
  const int fragment_row = lane_index / 4;         // g of the layouts above
  const int fragment_column = lane_index % 4 * 2;  // 2t
  const int warp_row = warp * kAttentionWarpRows;  // this warp's first row in the query block
  // ldmatrix row addresses within a 16 x 16 square: lane l gives row l % 8 of matrix l / 8, and
  // each matrix starts 8 rows or 8 columns into the square as the fragment it becomes needs.
  const int matrix_row = lane_index % 8;
  const int odd_matrix_offset = lane_index / 8 % 2 * 8;  // 8 for matrices 1 and 3
  const int upper_matrix_offset = lane_index / 16 * 8;   // 8 for matrices 2 and 3

  // The last query blocks first: causal ones visit the most keys, and should not start last.
  const auto batches = static_cast<uint32_t>(shape.batches);
  const auto query_blocks =
      static_cast<uint32_t>((shape.query_length + kAttentionQueryBlock - 1) / kAttentionQueryBlock);
  const uint32_t batch = block_index % batches;
  const int64_t first_query =
      int64_t{query_blocks - 1 - block_index / batches} * kAttentionQueryBlock;
  int64_t at[kAttentionOperands];
  shape.batch_offsets.offsets(batch, at);
  query += at[kAttentionQuery];
  key += at[kAttentionKey];
  value += at[kAttentionValue];
  out += at[kAttentionOut];
  const int64_t query_length = shape.query_length;
  const int64_t key_length = shape.key_length;

  // Causal: the block's last row attends to keys up to its own position.
  const int64_t query_end = std::min(first_query + kAttentionQueryBlock, query_length);
  const int64_t key_end = shape.causal ? std::min(key_length, query_end) : key_length;
  const int64_t key_blocks = (key_end + kAttentionKeyBlock - 1) / kAttentionKeyBlock;

  load_attention_tile<T, HeadDim>(lane, query_tile, query, shape.row_strides[kAttentionQuery],
                                  first_query, query_length);
  lane.commit_copies();
  if (key_blocks > 0) {
    load_attention_tile<T, HeadDim>(lane, key_tiles, key, shape.row_strides[kAttentionKey], 0,
                                    key_length);
    load_attention_tile<T, HeadDim>(lane, value_tiles, value, shape.row_strides[kAttentionValue], 0,
                                    key_length);
  }
  lane.commit_copies();
  lane.wait_copies_but_latest();  // the query tile; the first key block may still be arriving
  lane.sync_block();

  // This warp's 16 query rows as A fragments, one per 16 columns, kept for every key block: A's
  // registers 0 to 3 are the square's (rows 0-7, columns 0-7), (rows 8-15, columns 0-7),
  // (rows 0-7, columns 8-15) and (rows 8-15, columns 8-15).
  uint32_t query_fragments[kEmbeddingSteps][4];
#pragma unroll
  for (int step = 0; step < kEmbeddingSteps; ++step) {
    lane.load_matrices(query_fragments[step],
                       query_tile + (warp_row + matrix_row + odd_matrix_offset) * Tile::kPitch +
                           step * kStep + upper_matrix_offset);
  }

  // Per thread: out tile j's C fragment, and the running maximum (of scores in base 2) and sum of
  // fragment rows g (index 0) and g + 8 (index 1). The sums are this lane's share of the row's,
  // added across the row's four lanes only at the end.
  float output[kOutTiles][4] = {};
  float row_max[2] = {kMasked, kMasked};
  float row_sum[2] = {0.0f, 0.0f};

  for (int64_t block = 0; block < key_blocks; ++block) {
    const int buffer = static_cast<int>(block % 2);
    if (block + 1 < key_blocks) {
      const int64_t next = (block + 1) * kAttentionKeyBlock;
      load_attention_tile<T, HeadDim>(lane, key_tiles + (1 - buffer) * Tile::kElements, key,
                                      shape.row_strides[kAttentionKey], next, key_length);
      load_attention_tile<T, HeadDim>(lane, value_tiles + (1 - buffer) * Tile::kElements, value,
                                      shape.row_strides[kAttentionValue], next, key_length);
    }
    // Committed even when empty, so that all groups but the latest always include this block's.
    lane.commit_copies();
    lane.wait_copies_but_latest();
    lane.sync_block();
    const T* const keys = key_tiles + buffer * Tile::kElements;
    const T* const values = value_tiles + buffer * Tile::kElements;
    const int64_t first_key = block * kAttentionKeyBlock;

    // S = Q K^T. B's columns are keys, rows of the key tile, and B's rows are embedding columns,
    // so ldmatrix without .trans gives B's registers 0 and 1 of score tile 2j in matrices 0 and 1
    // (keys 0-7 of the square; columns 0-7, then 8-15), those of tile 2j + 1 in matrices 2 and 3
    // (keys 8-15).
    float scores[kScoreTiles][4] = {};
#pragma unroll
    for (int step = 0; step < kEmbeddingSteps; ++step) {
#pragma unroll
      for (int j = 0; j < kScoreTiles / 2; ++j) {
        uint32_t b[4];
        lane.load_matrices(b, keys +
                                  (j * kSquare + matrix_row + upper_matrix_offset) * Tile::kPitch +
                                  step * kStep + odd_matrix_offset);
        lane.multiply_accumulate(scores[2 * j], query_fragments[step], b[0], b[1]);
        lane.multiply_accumulate(scores[2 * j + 1], query_fragments[step], b[2], b[3]);
      }
    }

    // Scaled (before masking, so that a negative scale cannot turn a masked -inf into +inf),
    // then masked where the block holds keys past S or crosses the diagonal.
    const bool past_keys = first_key + kAttentionKeyBlock > key_length;
    const bool crosses_diagonal = shape.causal && first_key + kAttentionKeyBlock - 1 > first_query;
#pragma unroll
    for (int j = 0; j < kScoreTiles; ++j) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        float score = scores[j][e] * scale_log2;
        if (past_keys || crosses_diagonal) {
          const int64_t key_position = first_key + j * kTileColumns + fragment_column + e % 2;
          const int64_t query_position = first_query + warp_row + fragment_row + e / 2 * 8;
          if (key_position >= key_length || (shape.causal && key_position > query_position))
            score = kMasked;
        }
        scores[j][e] = score;
      }
    }

    // The online softmax: scores become exp2(score - new maximum), and what was accumulated
    // under the old maximum is rescaled to the new one.
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      float block_max = kMasked;
#pragma unroll
      for (int j = 0; j < kScoreTiles; ++j) {
        block_max = fmaxf(block_max, fmaxf(scores[j][2 * half], scores[j][2 * half + 1]));
      }
      block_max = across_row(lane, block_max, [](float a, float b) { return fmaxf(a, b); });
      const float new_max = fmaxf(row_max[half], block_max);
      // While every score of the row is -inf, subtracting -inf would give NaN; 0 gives exp2 = 0.
      const float base = new_max == kMasked ? 0.0f : new_max;
      const float rescale = exp2f(row_max[half] - base);
      row_max[half] = new_max;
      float block_sum = 0.0f;
#pragma unroll
      for (int j = 0; j < kScoreTiles; ++j) {
#pragma unroll
        for (int e = 2 * half; e < 2 * half + 2; ++e) {
          scores[j][e] = exp2f(scores[j][e] - base);
          block_sum += scores[j][e];
        }
      }
      row_sum[half] = row_sum[half] * rescale + block_sum;
#pragma unroll
      for (int j = 0; j < kOutTiles; ++j) {
        output[j][2 * half] *= rescale;
        output[j][2 * half + 1] *= rescale;
      }
    }

    // O += P V. The C fragments of score tiles 2k and 2k + 1 are, rounded to T, the A fragment of
    // P's 16-key step k: registers 0 and 1 from tile 2k (keys 0-7 of the step, rows g and g + 8),
    // registers 2 and 3 from tile 2k + 1 (keys 8-15). B's rows are keys, rows of the value tile,
    // so ldmatrix with .trans gives B's registers 0 and 1 of out tile 2j in matrices 0 and 1
    // (columns 0-7 of the square; keys 0-7, then 8-15), those of tile 2j + 1 in matrices 2 and 3
    // (columns 8-15).
#pragma unroll
    for (int k = 0; k < kKeySteps; ++k) {
      const uint32_t probabilities[4] = {
          lane.pack_pair(scores[2 * k][0], scores[2 * k][1]),
          lane.pack_pair(scores[2 * k][2], scores[2 * k][3]),
          lane.pack_pair(scores[2 * k + 1][0], scores[2 * k + 1][1]),
          lane.pack_pair(scores[2 * k + 1][2], scores[2 * k + 1][3])};
#pragma unroll
      for (int j = 0; j < kOutTiles / 2; ++j) {
        uint32_t b[4];
        lane.load_matrices_transposed(
            b, values + (k * kStep + matrix_row + odd_matrix_offset) * Tile::kPitch + j * kSquare +
                   upper_matrix_offset);
        lane.multiply_accumulate(output[2 * j], probabilities, b[0], b[1]);
        lane.multiply_accumulate(output[2 * j + 1], probabilities, b[2], b[3]);
      }
    }
    lane.sync_block();  // every warp is done with this buffer before the next block's loads refill
                        // it
  }

  // out = O / l, staged through this warp's own rows of the query tile (only this warp read
  // them, into its fragments) so that device memory is written in 16-byte vectors along rows.
  // Without keys (S = 0), out is 0, as the product with an empty value is.
  float inverse[2];
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const float sum = across_row(lane, row_sum[half], [](float a, float b) { return a + b; });
    inverse[half] = key_length == 0 ? 0.0f : 1.0f / sum;
  }
  T* const stage = query_tile + warp_row * Tile::kPitch;
  lane.sync_warp();  // this warp's ldmatrix reads of the rows come before the writes
#pragma unroll
  for (int j = 0; j < kOutTiles; ++j) {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      T* const pair =
          stage + (fragment_row + half * 8) * Tile::kPitch + j * kTileColumns + fragment_column;
      *reinterpret_cast<uint32_t*>(pair) = lane.pack_pair(output[j][2 * half] * inverse[half],
                                                          output[j][2 * half + 1] * inverse[half]);
    }
  }
  lane.sync_warp();
  constexpr int kVectors = kAttentionWarpRows * Tile::kVectorsPerRow;
  static_assert(kVectors % kWarpSize == 0);
#pragma unroll
  for (int i = 0; i < kVectors / kWarpSize; ++i) {
    const int vector = lane_index + i * kWarpSize;
    const int row = vector / Tile::kVectorsPerRow;
    const int column = vector % Tile::kVectorsPerRow * Tile::kVector;
    const int64_t query_position = first_query + warp_row + row;
    if (query_position < query_length) {
      lane.copy_vector(out + query_position * shape.row_strides[kAttentionOut] + column,
                       stage + row * Tile::kPitch + column);
    }
  }
}

}  // namespace bp::cuda
