// Fused attention, softmax(query @ key^T * scale) @ value, without the (L, S) score matrix: the
// keys are walked a block at a time with a running maximum, sum and output row per query row
// (the online softmax). Two shapes, as for the matrix products (matmul.cl):
//   fused_attention, for GPUs: one work-item per query row of one leading index, walking the
//     keys KEY_CHUNK at a time. A score is PARTS partial sums along the head dim, which a
//     compiler keeps in one vector register where a single running sum would have to stay in
//     order; values are added four keys at a time.
//   fused_attention_rows, for CPU devices: each work-item takes ROW_WORK query rows and walks
//     the keys KEY_BLOCK at a time, its scores and its output running as vector multiply-adds on
//     sums held in registers, as matmul_rows does. It reads the keys from a copy with the
//     positions along rows (transpose_keys), so that a vector holds consecutive keys.
// Semantics as the CPU backend's kernel: the query is scaled before the products; with
// is_causal, row i attends to keys 0..i; a NaN or +inf score makes the row's softmax undefined
// and its output NaN; with no keys at all (S == 0) the output is 0. Unlike the CPU kernel, the
// values of keys a row does not attend to are never read into it, so a NaN there stays out.

// The host refuses longer head dims (BP_STATUS_UNIMPLEMENTED), which then take the composite
// path: a work-item keeps its query row and output row in private memory.
#define MAX_HEAD 256
#define KEY_CHUNK 16
#define PARTS 8

// A (L, E)-like matrix of each leading index: element (row, col) of leading coordinates c is at
// base + dot8(c, leading) + row * row + col * col (the parameters name##_...).
#define HEAD_MATRIX(type, name)                                                          \
  type *name, const long name##_base, const long8 name##_leading, const long name##_row, \
      const long name##_col

__kernel void fused_attention(const long query_length, const long key_length, const int embedding,
                              const int value_embedding, const int leading_ndim,
                              const long8 leading_size, HEAD_MATRIX(__global const elem_t, query),
                              HEAD_MATRIX(__global const elem_t, key),
                              HEAD_MATRIX(__global const elem_t, value),
                              HEAD_MATRIX(__global elem_t, out), const compute_t scale,
                              const int is_causal) {
  const long row = get_global_id(0);
  if (row >= query_length) return;
  const long8 c = unravel(get_global_id(1), leading_ndim, leading_size);
  const long query_at = query_base + dot8(c, query_leading) + row * query_row;
  const long key_at = key_base + dot8(c, key_leading);
  const long value_at = value_base + dot8(c, value_leading);
  const long out_at = out_base + dot8(c, out_leading) + row * out_row;

  compute_t scaled_query[MAX_HEAD];
  compute_t output[MAX_HEAD];
  for (int e = 0; e < embedding; ++e) {
    scaled_query[e] = (compute_t)LOAD(query, query_at + e * query_col) * scale;
  }
  for (int e = 0; e < value_embedding; ++e) output[e] = 0;

  const long keys = is_causal ? min(row + 1, key_length) : key_length;
  compute_t running_max = -INFINITY;
  compute_t running_sum = 0;
  int undefined = 0;  // a NaN or +inf score was seen
  for (long first = 0; first < keys && !undefined; first += KEY_CHUNK) {
    const int count = (int)min((long)KEY_CHUNK, keys - first);
    compute_t scores[KEY_CHUNK];
    compute_t chunk_max = -INFINITY;
    for (int j = 0; j < count; ++j) {
      const long key_start = key_at + (first + j) * key_row;
      compute_t part[PARTS];
      for (int u = 0; u < PARTS; ++u) part[u] = 0;
      int e = 0;
      for (; e + PARTS <= embedding; e += PARTS) {
        for (int u = 0; u < PARTS; ++u) {
          part[u] += scaled_query[e + u] * (compute_t)LOAD(key, key_start + (e + u) * key_col);
        }
      }
      for (; e < embedding; ++e) {
        part[0] += scaled_query[e] * (compute_t)LOAD(key, key_start + e * key_col);
      }
      compute_t score = 0;
      for (int u = 0; u < PARTS; ++u) score += part[u];
      scores[j] = score;
      undefined |= isnan(score) || score == INFINITY;
      chunk_max = fmax(chunk_max, score);
    }
    // Scores of -inf (from infinite inputs) weigh nothing; a chunk of only those changes nothing.
    if (undefined || chunk_max == -INFINITY) continue;
    const compute_t new_max = fmax(running_max, chunk_max);
    const compute_t rescale = exp(running_max - new_max);  // 0 while running_max is -inf
    running_sum *= rescale;
    for (int e = 0; e < value_embedding; ++e) output[e] *= rescale;
    for (int j = 0; j < count; ++j) {
      scores[j] = exp(scores[j] - new_max);  // now the keys' weights
      running_sum += scores[j];
    }
    // Four keys at a time, so that each output element is read and written once per four.
    int j = 0;
    for (; j + 4 <= count; j += 4) {
      const long value_start = value_at + (first + j) * value_row;
      for (int e = 0; e < value_embedding; ++e) {
        const long at = value_start + e * value_col;
        output[e] += scores[j] * (compute_t)LOAD(value, at) +
                     scores[j + 1] * (compute_t)LOAD(value, at + value_row) +
                     scores[j + 2] * (compute_t)LOAD(value, at + 2 * value_row) +
                     scores[j + 3] * (compute_t)LOAD(value, at + 3 * value_row);
      }
    }
    for (; j < count; ++j) {
      const long value_start = value_at + (first + j) * value_row;
      for (int e = 0; e < value_embedding; ++e) {
        output[e] += scores[j] * (compute_t)LOAD(value, value_start + e * value_col);
      }
    }
    running_max = new_max;
  }

  const compute_t normaliser = keys == 0 ? (compute_t)1 : undefined ? (compute_t)NAN : running_sum;
  for (int e = 0; e < value_embedding; ++e) {
    STORE(out, out_at + e * out_col, output[e] / normaliser);
  }
}

// --- fused_attention_rows ------------------------------------------------------------------------
// Uses EACH_BLOCK_ROW (ROW_WORK = 8 rows) and two 16-wide vectors per row: KEY_BLOCK keys of
// scores, then 32 columns of the output at a time.
#define ROW_WORK 8
#define KEY_BLOCK 32
#define VALUE_COLUMNS 32

#if DTYPE == DT_FLOAT64
typedef double8 product8_t;
typedef double4 product4_t;
typedef double2 product2_t;
typedef long16 lane16_t;  // select()'s mask for product16_t
#else
typedef float8 product8_t;
typedef float4 product4_t;
typedef float2 product2_t;
typedef int16 lane16_t;
#endif
#define LANES16 ((lane16_t)(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15))

__attribute__((always_inline)) inline compute_t max16(const product16_t v) {
  const product8_t m8 = fmax(v.lo, v.hi);
  const product4_t m4 = fmax(m8.lo, m8.hi);
  const product2_t m2 = fmax(m4.lo, m4.hi);
  return fmax(m2.x, m2.y);
}

__attribute__((always_inline)) inline compute_t sum16(const product16_t v) {
  const product8_t s8 = v.lo + v.hi;
  const product4_t s4 = s8.lo + s8.hi;
  const product2_t s2 = s4.lo + s4.hi;
  return s2.x + s2.y;
}

// The keys of every leading index in blocks of KEY_BLOCK positions, each block with positions
// along rows: element (e, j) of block b of leading index i at ((i * blocks + b) * embedding + e)
// * KEY_BLOCK + j, in the compute type, and 0 past key_length. A block is one work-item's, so
// that each writes whole vectors into consecutive memory, and the block's key rows stay in the
// cache while it walks their columns.
__kernel void transpose_keys(const long key_length, const int embedding, const int leading_ndim,
                             const long8 leading_size, HEAD_MATRIX(__global const elem_t, key),
                             __global compute_t* key_blocks) {
  const long block = get_global_id(0);
  const long index = get_global_id(1);
  const long8 c = unravel(index, leading_ndim, leading_size);
  const long first = block * KEY_BLOCK;
  const long from = key_base + dot8(c, key_leading) + first * key_row;
  const int count = (int)min((long)KEY_BLOCK, key_length - first);
  __global compute_t* to =
      key_blocks + (index * get_global_size(0) + block) * embedding * KEY_BLOCK;
  for (int e = 0; e < embedding; ++e) {
    __global compute_t* row = to + e * KEY_BLOCK;
    if (count == KEY_BLOCK) {
      const long low = from + e * key_col, high = low + 16 * key_row;
      vstore16(LOAD16(key, low, key_row), 0, row);
      vstore16(LOAD16(key, high, key_row), 1, row);
    } else {
      for (int j = 0; j < KEY_BLOCK; ++j) {
        row[j] = j < count ? (compute_t)LOAD(key, from + j * key_row + e * key_col) : 0;
      }
    }
  }
}

// The online softmax's step for one row and one block of scores (`low` for keys 0-15 of the
// block, `high` for 16-31), of which the row sees the first `seen`: replaces `weights` with the
// keys' weights relative to the new running maximum and returns the factor that rescales the
// row's output so far. A row that has met a NaN or +inf score is `undefined` and takes nothing
// more. A block whose seen scores are all -inf (from infinite inputs) weighs nothing, and
// `seen` becomes 0 so that its values are not read into the row.
__attribute__((always_inline)) inline compute_t weigh_block(product16_t low, product16_t high,
                                                            int* seen, compute_t* running_max,
                                                            compute_t* running_sum, int* undefined,
                                                            compute_t* weights) {
  low = select(low, (product16_t)(-INFINITY), LANES16 >= (lane16_t)(*seen));
  high = select(high, (product16_t)(-INFINITY), LANES16 + 16 >= (lane16_t)(*seen));
  *undefined = *undefined || any(isnan(low)) || any(isnan(high)) ||
               any(isequal(low, (product16_t)INFINITY)) ||
               any(isequal(high, (product16_t)INFINITY));
  const compute_t block_max = max16(fmax(low, high));
  if (*undefined || block_max == -INFINITY) {
    *seen = 0;
    return 1;
  }
  const compute_t new_max = fmax(*running_max, block_max);
  const compute_t rescale = exp(*running_max - new_max);  // 0 while running_max is -inf
  low = exp(low - new_max);
  high = exp(high - new_max);
  *running_sum = *running_sum * rescale + sum16(low + high);
  *running_max = new_max;
  vstore16(low, 0, weights);
  vstore16(high, 1, weights);
  return rescale;
}

// Row i's scores for this block: its scaled query times the block's keys, 32 at a time.
#define ADD_SCORES(i)                                     \
  {                                                       \
    const compute_t query_value = scaled_query[i][e];     \
    ADD_TO_BLOCK_ROW(i, query_value, keys_low, keys_high) \
  }
#define WEIGH_ROW(i)                                                               \
  rescale[i] = weigh_block(sum##i##_low, sum##i##_high, &seen[i], &running_max[i], \
                           &running_sum[i], &undefined[i], weights[i]);
// Row i's share of value row j: for every key, or for the keys the row sees.
#define ADD_WEIGHTED_VALUES(i)                           \
  {                                                      \
    const compute_t weight = weights[i][j];              \
    ADD_TO_BLOCK_ROW(i, weight, values_low, values_high) \
  }
#define ADD_SEEN_WEIGHTED_VALUES(i) \
  if (j < seen[i]) ADD_WEIGHTED_VALUES(i)
#define RESCALE_OUTPUT_ROW(i)                                                     \
  {                                                                               \
    compute_t* output_row = output[i] + first_column;                             \
    vstore16(vload16(0, output_row) * rescale[i] + sum##i##_low, 0, output_row);  \
    vstore16(vload16(1, output_row) * rescale[i] + sum##i##_high, 1, output_row); \
  }
// Adds the weighted values of the block's `count` keys to every row's output, with ADD per row.
#define ADD_BLOCK_VALUES(ADD)                                                                 \
  for (int j = 0; j < count; ++j) {                                                           \
    const long value_at_j = value_at + (first + j) * value_row + first_column * value_col;    \
    product16_t values_low, values_high;                                                      \
    if (columns == VALUE_COLUMNS) {                                                           \
      const long value_at_high = value_at_j + 16 * value_col;                                 \
      values_low = LOAD16(value, value_at_j, value_col);                                      \
      values_high = LOAD16(value, value_at_high, value_col);                                  \
    } else {                                                                                  \
      compute_t row_values[VALUE_COLUMNS]; /* 0 past the value's columns */                   \
      for (int u = 0; u < VALUE_COLUMNS; ++u) {                                               \
        row_values[u] = u < columns ? (compute_t)LOAD(value, value_at_j + u * value_col) : 0; \
      }                                                                                       \
      values_low = vload16(0, row_values);                                                    \
      values_high = vload16(1, row_values);                                                   \
    }                                                                                         \
    EACH_BLOCK_ROW(ADD)                                                                       \
  }

// Rows [first_row, first_row + rows) of one leading index; fused_attention_rows passes the
// constant 1 as value_col where value rows are dense, which turns each vector of values into one
// load (hence always_inline: PoCL leaves the function a call otherwise).
__attribute__((always_inline)) inline void attend_rows(
    const long key_length, const int embedding, const int value_embedding, const long first_row,
    const int rows, __global const elem_t* query, const long query_at, const long query_row,
    const long query_col, __global const compute_t* keys, __global const elem_t* value,
    const long value_at, const long value_row, const long value_col, __global elem_t* out,
    const long out_at, const long out_row, const long out_col, const compute_t scale,
    const int is_causal) {
  // Rows past `rows` are zeros: they are computed alongside and never stored.
  compute_t scaled_query[ROW_WORK][MAX_HEAD];
  compute_t output[ROW_WORK][MAX_HEAD];
  compute_t weights[ROW_WORK][KEY_BLOCK];
  compute_t running_max[ROW_WORK], running_sum[ROW_WORK], rescale[ROW_WORK];
  int undefined[ROW_WORK], seen[ROW_WORK];
  long keys_of_row[ROW_WORK];
  for (int i = 0; i < ROW_WORK; ++i) {
    for (int e = 0; e < embedding; ++e) {
      scaled_query[i][e] =
          i < rows ? (compute_t)LOAD(query, query_at + i * query_row + e * query_col) * scale : 0;
    }
    for (int e = 0; e < MAX_HEAD; ++e) output[i][e] = 0;
    running_max[i] = -INFINITY;
    running_sum[i] = 0;
    undefined[i] = 0;
    keys_of_row[i] = is_causal ? min(first_row + i + 1, key_length) : key_length;
  }

  // The keys some row of the block sees.
  const long keys_seen = is_causal ? min(first_row + rows, key_length) : key_length;
  for (long first = 0; first < keys_seen; first += KEY_BLOCK) {
    const int count = (int)min((long)KEY_BLOCK, keys_seen - first);
    for (int i = 0; i < ROW_WORK; ++i) {
      seen[i] = (int)clamp(keys_of_row[i] - first, 0L, (long)count);
    }
    {
      EACH_BLOCK_ROW(DECLARE_BLOCK_ROW)
      for (int e = 0; e < embedding; ++e) {
        const __global compute_t* column = keys + (first * embedding + e * KEY_BLOCK);
        const product16_t keys_low = vload16(0, column), keys_high = vload16(1, column);
        EACH_BLOCK_ROW(ADD_SCORES)
      }
      EACH_BLOCK_ROW(WEIGH_ROW)
    }
    int every_row_sees_all = 1;
    for (int i = 0; i < ROW_WORK; ++i) every_row_sees_all &= seen[i] == count;
    for (int first_column = 0; first_column < value_embedding; first_column += VALUE_COLUMNS) {
      const int columns = min(VALUE_COLUMNS, value_embedding - first_column);
      EACH_BLOCK_ROW(DECLARE_BLOCK_ROW)
      if (every_row_sees_all) {
        ADD_BLOCK_VALUES(ADD_WEIGHTED_VALUES)
      } else {
        ADD_BLOCK_VALUES(ADD_SEEN_WEIGHTED_VALUES)
      }
      EACH_BLOCK_ROW(RESCALE_OUTPUT_ROW)
    }
  }

  for (int i = 0; i < rows; ++i) {
    const compute_t normaliser = keys_of_row[i] == 0 ? (compute_t)1
                                 : undefined[i]      ? (compute_t)NAN
                                                     : running_sum[i];
    for (int e = 0; e < value_embedding; ++e) {
      STORE(out, out_at + i * out_row + e * out_col, output[i][e] / normaliser);
    }
  }
}

__kernel void fused_attention_rows(
    const long query_length, const long key_length, const int embedding, const int value_embedding,
    const int leading_ndim, const long8 leading_size, HEAD_MATRIX(__global const elem_t, query),
    __global const compute_t* key_blocks, HEAD_MATRIX(__global const elem_t, value),
    HEAD_MATRIX(__global elem_t, out), const compute_t scale, const int is_causal) {
  const long first_row = get_global_id(0) * ROW_WORK;
  if (first_row >= query_length) return;
  const long index = get_global_id(1);
  const long8 c = unravel(index, leading_ndim, leading_size);
  const int rows = (int)min((long)ROW_WORK, query_length - first_row);
  const long query_at = query_base + dot8(c, query_leading) + first_row * query_row;
  const long value_at = value_base + dot8(c, value_leading);
  const long out_at = out_base + dot8(c, out_leading) + first_row * out_row;
  const long blocks = (key_length + KEY_BLOCK - 1) / KEY_BLOCK;
  __global const compute_t* keys = key_blocks + index * blocks * embedding * KEY_BLOCK;
  if (value_col == 1) {
    attend_rows(key_length, embedding, value_embedding, first_row, rows, query, query_at, query_row,
                query_col, keys, value, value_at, value_row, 1, out, out_at, out_row, out_col,
                scale, is_causal);
  } else {
    attend_rows(key_length, embedding, value_embedding, first_row, rows, query, query_at, query_row,
                query_col, keys, value, value_at, value_row, value_col, out, out_at, out_row,
                out_col, scale, is_causal);
  }
}
