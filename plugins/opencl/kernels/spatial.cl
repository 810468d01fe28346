// conv2d and the 2-D pooling ops over (N, C, H, W) views of any strides: one work-item per
// output element, except conv2d_rows (below). Floating dtypes only. Sizes and strides come as
// long4 vectors in (N, C, H, W) order.

// The coordinates (n, c, y, x) of row-major index i over `size`.
inline long4 unravel4(long i, const long4 size) {
  long4 c;
  c.s3 = i % size.s3;
  i /= size.s3;
  c.s2 = i % size.s2;
  i /= size.s2;
  c.s1 = i % size.s1;
  c.s0 = i / size.s1;
  return c;
}

inline long at4(const long4 c, const long4 stride) {
  return c.s0 * stride.s0 + c.s1 * stride.s1 + c.s2 * stride.s2 + c.s3 * stride.s3;
}

// out[n, o, y, x] = bias[o] + sum over the group's input channels i and the kernel taps (r, s)
// of in[n, g * in_per_group + i, y * stride - padding + r * dilation, ...] * weight[o, i, r, s],
// accumulated in acc_t: conv2d in the Gpu kernel shape. Taps in the padding contribute nothing.
__kernel void conv2d(const long total, __global elem_t* out, const long out_base,
                     const long4 out_size, const long4 out_stride, __global const elem_t* in,
                     const long in_base, const long4 in_size, const long4 in_stride,
                     __global const elem_t* weight, const long weight_base, const long4 weight_size,
                     const long4 weight_stride, __global const elem_t* bias, const long bias_base,
                     const long bias_stride, const int has_bias, const long2 stride,
                     const long2 padding, const long2 dilation, const long out_per_group) {
  const long i = get_global_id(0);
  if (i >= total) return;
  const long4 c = unravel4(i, out_size);
  const long in_per_group = weight_size.s1;
  const long first_channel = c.s1 / out_per_group * in_per_group;
  const long top = c.s2 * stride.s0 - padding.s0;
  const long left = c.s3 * stride.s1 - padding.s1;
  acc_t sum = has_bias ? (acc_t)LOAD(bias, bias_base + c.s1 * bias_stride) : (acc_t)0;
  for (long ic = 0; ic < in_per_group; ++ic) {
    const long in_plane = in_base + c.s0 * in_stride.s0 + (first_channel + ic) * in_stride.s1;
    const long weight_plane = weight_base + c.s1 * weight_stride.s0 + ic * weight_stride.s1;
    for (long r = 0; r < weight_size.s2; ++r) {
      const long y = top + r * dilation.s0;
      if (y < 0 || y >= in_size.s2) continue;
      for (long s = 0; s < weight_size.s3; ++s) {
        const long x = left + s * dilation.s1;
        if (x < 0 || x >= in_size.s3) continue;
        sum += (acc_t)LOAD(in, in_plane + y * in_stride.s2 + x * in_stride.s3) *
               (acc_t)LOAD(weight, weight_plane + r * weight_stride.s2 + s * weight_stride.s3);
      }
    }
  }
  STORE(out, out_base + at4(c, out_stride), sum);
}

// Pooling over windows the host lays out per axis (bp::plugin::PoolAxis): `axes` holds, for the
// rows and then the columns, every output index's first tap, tap count and divisor, so the
// CPU backend and this one agree on every window. `average` 0 takes the maximum (NaN wins);
// otherwise the sum over the taps is divided by the product of the two divisors, or by
// `divisor_override` when that is not 0. Work-items: dim 0, the output columns (rounded up to
// whole work-groups); dim 1, the output rows; dim 2, the channels. Each takes its output in
// every image in turn, so that none divides to find its coordinates (three 64-bit divisions
// per output would take most of the kernel's time).
__kernel void pool2d(__global elem_t* out, const long out_base, const long4 out_size,
                     const long4 out_stride, __global const elem_t* in, const long in_base,
                     const long4 in_stride, __global const long* axes, const long2 step,
                     const int average, const long divisor_override) {
  const long x = get_global_id(0), y = get_global_id(1), channel = get_global_id(2);
  if (x >= out_size.s3) return;
  __global const long* rows = axes;                    // first, count, divisor: out_size.s2 each
  __global const long* cols = axes + 3 * out_size.s2;  // and out_size.s3 each
  const long row_first = rows[y], row_count = rows[out_size.s2 + y];
  const long col_first = cols[x], col_count = cols[out_size.s3 + x];
  const long divisor = divisor_override != 0
                           ? divisor_override
                           : rows[2 * out_size.s2 + y] * cols[2 * out_size.s3 + x];
  for (long image = 0; image < out_size.s0; ++image) {
    const long plane = in_base + image * in_stride.s0 + channel * in_stride.s1;
    compute_t result;
    if (average == 0) {
      result = -INFINITY;
      for (long r = 0; r < row_count; ++r) {
        const long row = plane + (row_first + r * step.s0) * in_stride.s2;
        for (long k = 0; k < col_count; ++k) {
          const compute_t v = LOAD(in, row + (col_first + k * step.s1) * in_stride.s3);
          result = MAX_NAN(result, v);
        }
      }
    } else {
      compute_t sum = 0;
      for (long r = 0; r < row_count; ++r) {
        const long row = plane + (row_first + r * step.s0) * in_stride.s2;
        for (long k = 0; k < col_count; ++k) {
          sum += LOAD(in, row + (col_first + k * step.s1) * in_stride.s3);
        }
      }
      result = sum / (compute_t)divisor;
    }
    STORE(out, out_base + at4((long4)(image, channel, y, x), out_stride), result);
  }
}

// conv2d in the Cpu kernel shape: a work-item computes CONV_CHANNELS output channels (of one
// group) by CONV_COLUMNS consecutive output columns of one output row of one image, alone. For
// every input channel and tap it reads CONV_CHANNELS weights and CONV_COLUMNS inputs, and the
// sums along the columns run as vector instructions, as in matmul_rows; they are in product_t
// (conv2d sums one output per work-item in acc_t).
#define CONV_CHANNELS 8  // the block of EACH_BLOCK_ROW
#define CONV_COLUMNS 32

// sum[o][j] for `channels` output channels from weight_first and `columns` output columns whose
// first window starts at input (top, left): CONV_CHANNELS and CONV_COLUMNS but at the edges.
// The sums live in registers (EACH_BLOCK_ROW in common.cl), a row per channel; the CONV_COLUMNS
// inputs of a tap are read as two vectors: without checks where the block has all its columns
// and they lie inside the row, `column_step` elements apart (the constant 1 where the
// convolution's stride and the input's columns are 1); else one by one, 0 in the padding and
// past the block's `columns`. Channels past the block's `channels` sum zeros.
#define ADD_CHANNEL_PRODUCTS(o)                                                      \
  {                                                                                  \
    const product_t w = o < channels ? LOAD(weight, tap + o * weight_stride.s0) : 0; \
    ADD_TO_BLOCK_ROW(o, w, inputs_low, inputs_high)                                  \
  }

__attribute__((always_inline)) inline void conv2d_block_sums(
    __global const elem_t* in, const long in_first, const long4 in_size, const long4 in_stride,
    __global const elem_t* weight, const long weight_first, const long4 weight_size,
    const long4 weight_stride, const long top, const long left, const long2 stride,
    const long2 dilation, const long column_step, const int channels, const int columns,
    product_t sum[CONV_CHANNELS][CONV_COLUMNS]) {
  EACH_BLOCK_ROW(DECLARE_BLOCK_ROW)
  for (long ic = 0; ic < weight_size.s1; ++ic) {
    const long in_plane = in_first + ic * in_stride.s1;
    for (long r = 0; r < weight_size.s2; ++r) {
      const long y = top + r * dilation.s0;
      if (y < 0 || y >= in_size.s2) continue;
      for (long s = 0; s < weight_size.s3; ++s) {
        const long first_x = left + s * dilation.s1;
        product16_t inputs_low, inputs_high;
        if (columns == CONV_COLUMNS && first_x >= 0 &&
            first_x + (CONV_COLUMNS - 1) * stride.s1 < in_size.s3) {
          const long low = in_plane + y * in_stride.s2 + first_x * in_stride.s3;
          const long high = low + 16 * column_step;
          inputs_low = LOAD16(in, low, column_step);
          inputs_high = LOAD16(in, high, column_step);
        } else {
          product_t inputs[CONV_COLUMNS];
          for (int j = 0; j < CONV_COLUMNS; ++j) {
            inputs[j] = 0;
            // Past the block's columns, j * stride may not fit in a long.
            if (j >= columns) continue;
            const long x = first_x + j * stride.s1;
            if (x >= 0 && x < in_size.s3) {
              inputs[j] = (product_t)LOAD(in, in_plane + y * in_stride.s2 + x * in_stride.s3);
            }
          }
          inputs_low = vload16(0, inputs);
          inputs_high = vload16(1, inputs);
        }
        const long tap =
            weight_first + ic * weight_stride.s1 + r * weight_stride.s2 + s * weight_stride.s3;
        EACH_BLOCK_ROW(ADD_CHANNEL_PRODUCTS)
      }
    }
  }
  EACH_BLOCK_ROW(STORE_BLOCK_ROW)
}

// conv2d's parameters but `total`. Work-items: dim 0, the blocks of output columns; dim 1, the
// output rows; dim 2, the blocks of output channels of every group of every image.
__kernel void conv2d_rows(__global elem_t* out, const long out_base, const long4 out_size,
                          const long4 out_stride, __global const elem_t* in, const long in_base,
                          const long4 in_size, const long4 in_stride, __global const elem_t* weight,
                          const long weight_base, const long4 weight_size,
                          const long4 weight_stride, __global const elem_t* bias,
                          const long bias_base, const long bias_stride, const int has_bias,
                          const long2 stride, const long2 padding, const long2 dilation,
                          const long out_per_group) {
  const long first_column = get_global_id(0) * CONV_COLUMNS;
  const long y = get_global_id(1);
  const long blocks_per_group = (out_per_group + CONV_CHANNELS - 1) / CONV_CHANNELS;
  const long groups = out_size.s1 / out_per_group;
  const long image = get_global_id(2) / (groups * blocks_per_group);
  const long group = get_global_id(2) / blocks_per_group % groups;
  const long first_channel =
      group * out_per_group + get_global_id(2) % blocks_per_group * CONV_CHANNELS;
  const int channels = (int)min((long)CONV_CHANNELS, (group + 1) * out_per_group - first_channel);
  const int columns = (int)min((long)CONV_COLUMNS, out_size.s3 - first_column);
  const long in_first = in_base + image * in_stride.s0 + group * weight_size.s1 * in_stride.s1;
  const long weight_first = weight_base + first_channel * weight_stride.s0;
  const long top = y * stride.s0 - padding.s0;
  const long left = first_column * stride.s1 - padding.s1;
  product_t sum[CONV_CHANNELS][CONV_COLUMNS];
  const long column_step = stride.s1 * in_stride.s3;
  if (channels == CONV_CHANNELS && columns == CONV_COLUMNS && column_step == 1) {
    conv2d_block_sums(in, in_first, in_size, in_stride, weight, weight_first, weight_size,
                      weight_stride, top, left, stride, dilation, 1, CONV_CHANNELS, CONV_COLUMNS,
                      sum);
  } else {
    conv2d_block_sums(in, in_first, in_size, in_stride, weight, weight_first, weight_size,
                      weight_stride, top, left, stride, dilation, column_step, channels, columns,
                      sum);
  }
  for (int o = 0; o < channels; ++o) {
    const long channel = first_channel + o;
    const product_t b = has_bias ? (product_t)LOAD(bias, bias_base + channel * bias_stride) : 0;
    for (int j = 0; j < columns; ++j) {
      const long4 c = (long4)(image, channel, y, first_column + j);
      STORE(out, out_base + at4(c, out_stride), sum[o][j] + b);
    }
  }
}
