// Matrix products out = alpha * (a @ b) + beta * addend for a batch of (n x k) @ (k x m)
// products with any strides (mm, bmm, addmm), by one of two kernels with the same parameters:
//   matmul, for GPUs: a TILE x TILE work-group computes a BLOCK x BLOCK block of out, BLOCK =
//     TILE * WORK: each work-item sums WORK x WORK elements, rows ty + TILE * i and columns
//     tx + TILE * j of the block, so that it reuses each value it reads from local memory WORK
//     times. Blocks of a and b pass through local memory K_STEP columns (rows) at a time.
//   matmul_rows, for CPU devices, where local memory is ordinary memory and a work-group's
//     barriers cost more than they save: each work-item computes ROW_WORK x COL_WORK elements
//     of out on its own, reading for each k its ROW_WORK values of a and COL_WORK consecutive
//     values of b, so that the sums along a row run as vector instructions held in registers.
// Each element's products are summed in order of k, in product_t (the compute type for floats,
// long for integers, as the CPU backend). With use_addend false, or beta == 0, the addend is
// not read (it may hold NaN), as in BLAS and PyTorch.

// A matrix operand: element (batch, row, col) is at base + batch*batch_stride + row*row_stride
// + col*col_stride.
#define MATRIX(type, name)                                                            \
  type *name, const long name##_base, const long name##_batch, const long name##_row, \
      const long name##_col
#define MATRIX_AT(name, batch, row, col) \
  (name##_base + (batch)*name##_batch + (row)*name##_row + (col)*name##_col)

// Stores alpha * sum + beta * addend as element (batch, row, col) of out.
inline void store_product(MATRIX(__global elem_t, out), MATRIX(__global const elem_t, addend),
                          const long batch, const long row, const long col, const product_t sum,
                          const product_t alpha, const product_t beta, const int use_addend) {
  product_t result = alpha * sum;
  if (use_addend && beta != 0) {
    result += beta * (product_t)LOAD(addend, MATRIX_AT(addend, batch, row, col));
  }
  STORE(out, MATRIX_AT(out, batch, row, col), result);
}

#define WORK 8
#define BLOCK (TILE * WORK)
// Two blocks of K_STEP x (BLOCK + 1) values stay within 32 KiB of local memory (OpenCL's least).
#if DTYPE == DT_FLOAT64 || DTYPE == DT_INT64
#define K_STEP (TILE / 2)
#else
#define K_STEP TILE
#endif
// Elements of each block a work-item loads per step.
#define LOADS (BLOCK * K_STEP / (TILE * TILE))

__kernel __attribute__((reqd_work_group_size(TILE, TILE, 1))) void matmul(
    const long n, const long k, const long m, MATRIX(__global const elem_t, a),
    MATRIX(__global const elem_t, b), MATRIX(__global elem_t, out),
    MATRIX(__global const elem_t, addend), const product_t alpha, const product_t beta,
    const int use_addend) {
  // [k][row] and [k][col]; +1 keeps the work-items that store one k apart off one bank.
  __local compute_t a_block[K_STEP][BLOCK + 1];
  __local compute_t b_block[K_STEP][BLOCK + 1];
  const long batch = get_global_id(2);
  const int tx = get_local_id(0), ty = get_local_id(1);
  const int id = ty * TILE + tx;
  const long first_row = get_group_id(1) * BLOCK;
  const long first_col = get_group_id(0) * BLOCK;

  product_t sum[WORK][WORK];
  for (int i = 0; i < WORK; ++i) {
    for (int j = 0; j < WORK; ++j) sum[i][j] = 0;
  }
  for (long t = 0; t < k; t += K_STEP) {
    // BLOCK * K_STEP elements of each operand, LOADS per work-item; zeros past the edges.
    // (Names like a_row are taken: MATRIX's parameters.)
    for (int q = 0; q < LOADS; ++q) {
      const int e = id + q * TILE * TILE;
      const int block_row = e / K_STEP, row_step = e % K_STEP;
      const long row = first_row + block_row;
      a_block[row_step][block_row] =
          row < n && t + row_step < k ? LOAD(a, MATRIX_AT(a, batch, row, t + row_step)) : 0;
      const int col_step = e / BLOCK, block_col = e % BLOCK;
      const long col = first_col + block_col;
      b_block[col_step][block_col] =
          t + col_step < k && col < m ? LOAD(b, MATRIX_AT(b, batch, t + col_step, col)) : 0;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int p = 0; p < K_STEP; ++p) {
      product_t a_values[WORK], b_values[WORK];
      for (int i = 0; i < WORK; ++i) a_values[i] = a_block[p][ty + TILE * i];
      for (int j = 0; j < WORK; ++j) b_values[j] = b_block[p][tx + TILE * j];
      for (int i = 0; i < WORK; ++i) {
        for (int j = 0; j < WORK; ++j) sum[i][j] += a_values[i] * b_values[j];
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  for (int i = 0; i < WORK; ++i) {
    const long row = first_row + ty + TILE * i;
    for (int j = 0; j < WORK; ++j) {
      const long col = first_col + tx + TILE * j;
      if (row >= n || col >= m) continue;
      store_product(out, out_base, out_batch, out_row, out_col, addend, addend_base, addend_batch,
                    addend_row, addend_col, batch, row, col, sum[i][j], alpha, beta, use_addend);
    }
  }
}

// matmul_rows: the elements of out one work-item computes (the block of EACH_BLOCK_ROW).
#define ROW_WORK 8
#define COL_WORK 32

// A work-item of matmul_rows keeps its block's sums in registers (EACH_BLOCK_ROW in common.cl)
// and runs each row's products as vector multiply-adds. b's columns are `b_col` apart;
// matmul_rows passes the constant 1 where b's rows are dense, which turns each vector of b into
// one load, and ROW_WORK and COL_WORK as the block's `rows` and `cols` where it is whole, which
// drops the checks at the edges of out. sum_row_block must be inlined for that: PoCL leaves it
// a call otherwise, and every vector of b a gather.

// Adds row i's products for this k; rows past the block's own sum zeros.
#define ADD_ROW_PRODUCTS(i)                                                                  \
  {                                                                                          \
    const product_t a_value = i < rows ? LOAD(a, MATRIX_AT(a, batch, first_row + i, p)) : 0; \
    ADD_TO_BLOCK_ROW(i, a_value, b_low, b_high)                                              \
  }

// sum[i][j] = the sums of rows [first_row, first_row + rows) and columns [first_col, first_col
// + cols), ROW_WORK and COL_WORK but at the edges of out.
__attribute__((always_inline)) inline void sum_row_block(
    const long k, MATRIX(__global const elem_t, a), MATRIX(__global const elem_t, b),
    const long batch, const long first_row, const long first_col, const int rows, const int cols,
    product_t sum[ROW_WORK][COL_WORK]) {
  EACH_BLOCK_ROW(DECLARE_BLOCK_ROW)
  for (long p = 0; p < k; ++p) {
    product16_t b_low, b_high;
    if (cols == COL_WORK) {
      const long low = MATRIX_AT(b, batch, p, first_col), high = low + 16 * b_col;
      b_low = LOAD16(b, low, b_col);
      b_high = LOAD16(b, high, b_col);
    } else {
      product_t b_values[COL_WORK];  // 0 past the block's columns
      for (int j = 0; j < COL_WORK; ++j) {
        b_values[j] = j < cols ? LOAD(b, MATRIX_AT(b, batch, p, first_col + j)) : 0;
      }
      b_low = vload16(0, b_values);
      b_high = vload16(1, b_values);
    }
    EACH_BLOCK_ROW(ADD_ROW_PRODUCTS)
  }
  EACH_BLOCK_ROW(STORE_BLOCK_ROW)
}

__kernel void matmul_rows(const long n, const long k, const long m,
                          MATRIX(__global const elem_t, a), MATRIX(__global const elem_t, b),
                          MATRIX(__global elem_t, out), MATRIX(__global const elem_t, addend),
                          const product_t alpha, const product_t beta, const int use_addend) {
  const long batch = get_global_id(2);
  const long first_row = get_global_id(0) * ROW_WORK;
  const long first_col = get_global_id(1) * COL_WORK;
  if (first_row >= n || first_col >= m) return;
  const int rows = (int)min((long)ROW_WORK, n - first_row);
  const int cols = (int)min((long)COL_WORK, m - first_col);
  product_t sum[ROW_WORK][COL_WORK];
  if (rows == ROW_WORK && cols == COL_WORK && b_col == 1) {
    sum_row_block(k, a, a_base, a_batch, a_row, a_col, b, b_base, b_batch, b_row, 1, batch,
                  first_row, first_col, ROW_WORK, COL_WORK, sum);
  } else if (rows == ROW_WORK && cols == COL_WORK) {
    sum_row_block(k, a, a_base, a_batch, a_row, a_col, b, b_base, b_batch, b_row, b_col, batch,
                  first_row, first_col, ROW_WORK, COL_WORK, sum);
  } else {
    sum_row_block(k, a, a_base, a_batch, a_row, a_col, b, b_base, b_batch, b_row, b_col, batch,
                  first_row, first_col, rows, cols, sum);
  }
  for (int i = 0; i < rows; ++i) {
    for (int j = 0; j < cols; ++j) {
      store_product(out, out_base, out_batch, out_row, out_col, addend, addend_base, addend_batch,
                    addend_row, addend_col, batch, first_row + i, first_col + j, sum[i][j], alpha,
                    beta, use_addend);
    }
  }
}
