// Fused attention, softmax(query @ key^T * scale) @ value, without the (L, S) score matrix: one
// work-item per query row of one leading index, walking the keys KEY_CHUNK at a time with a
// running maximum, sum and output row (the online softmax). A score is PARTS partial sums
// along the head dim, which a compiler keeps in one vector register where a single running sum
// would have to stay in order (on PoCL, 2.4x faster); values are added four keys at a time.
// Semantics as the CPU backend's kernel: the query is scaled before the products; with
// is_causal, row i attends to keys 0..i; a NaN or +inf score makes the row's softmax undefined
// and its output NaN; with no keys at all (S == 0) the output is 0.

// The host refuses longer head dims (BP_STATUS_UNIMPLEMENTED), which then take the composite
// path: a work-item keeps its query row and output row in private memory.
#define MAX_HEAD 256
#define KEY_CHUNK 16
#define PARTS 8

// A (L, E)-like matrix of each leading index: element (row, col) of leading coordinates c is at
// base + dot8(c, leading) + row * row + col * col (the parameters name##_...).
#define HEAD_MATRIX(type, name)                                                                \
  type* name, const long name##_base, const long8 name##_leading, const long name##_row,       \
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
