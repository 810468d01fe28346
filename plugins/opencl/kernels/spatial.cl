// conv2d and the 2-D pooling ops, and their gradients, over (N, C, H, W) views of any strides:
// one work-item per output element, except conv2d_rows (below). Gradients are gathered per
// element they write, never scattered, so that no two work-items add to one element and every
// sum runs in one order. Floating dtypes only. Sizes and strides come as long4 vectors in
// (N, C, H, W) order.

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
// CPU backend and this one agree on every window. `average` 0 takes the maximum, as PyTorch
// does: a larger value or a NaN replaces the maximum so far, so the last NaN wins; with
// `with_indices` the maximum's flat index in its input plane (y * in_width + x; the window's first
// tap where every value is -inf) goes to `indices`. Otherwise the sum over the taps is divided by
// the product of the two divisors, or by `divisor_override` when that is not 0. Work-items:
// dim 0, the output columns (rounded up to whole work-groups); dim 1, the output rows; dim 2, the
// channels. Each takes its output in every image in turn, so that none divides to find its
// coordinates (three 64-bit divisions per output would take most of the kernel's time).
__kernel void pool2d(__global elem_t* out, const long out_base, const long4 out_size,
                     const long4 out_stride, __global const elem_t* in, const long in_base,
                     const long4 in_stride, __global const long* axes, const long2 step,
                     const int average, const long divisor_override, __global long* indices,
                     const long indices_base, const long4 indices_stride, const int with_indices,
                     const long in_width) {
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
    const long4 at = (long4)(image, channel, y, x);
    compute_t result;
    if (average == 0) {
      result = -INFINITY;
      long best = row_first * in_width + col_first;
      for (long r = 0; r < row_count; ++r) {
        const long in_y = row_first + r * step.s0;
        const long row = plane + in_y * in_stride.s2;
        for (long k = 0; k < col_count; ++k) {
          const long in_x = col_first + k * step.s1;
          const compute_t v = LOAD(in, row + in_x * in_stride.s3);
          if (v > result || IS_NAN(v)) {
            result = v;
            best = in_y * in_width + in_x;
          }
        }
      }
      if (with_indices) indices[indices_base + at4(at, indices_stride)] = best;
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
    STORE(out, out_base + at4(at, out_stride), result);
  }
}

// The pooling ops' gradient, gathered per input element: grad_input[n, c, y, x] sums
// grad_output over the outputs whose windows take (y, x), in the outputs' row-major order (the
// order in which PyTorch's kernels add them). `axes` holds the forward windows as in pool2d;
// `covering` holds, for the input rows and then the input columns, the first output index whose
// window may take it and how many consecutive ones may (bp::plugin::covering_windows). Maximum
// (`average` 0): an output adds its gradient where its index, from max_pool2d_with_indices, is
// the element's. Average: an output whose window takes the element adds its gradient divided
// by the window's divisor (pool2d's). Work-items as in pool2d, over grad_input.
__kernel void pool2d_backward(__global elem_t* out, const long out_base, const long4 out_size,
                              const long4 out_stride, __global const elem_t* grad,
                              const long grad_base, const long4 grad_size, const long4 grad_stride,
                              __global const long* indices, const long indices_base,
                              const long4 indices_stride, __global const long* axes,
                              __global const long* covering, const long2 step, const int average,
                              const long divisor_override) {
  const long x = get_global_id(0), y = get_global_id(1), channel = get_global_id(2);
  if (x >= out_size.s3) return;
  __global const long* rows = axes;
  __global const long* cols = axes + 3 * grad_size.s2;
  __global const long* covering_cols = covering + 2 * out_size.s2;
  const long oy_first = covering[y], oy_count = covering[out_size.s2 + y];
  const long ox_first = covering_cols[x], ox_count = covering_cols[out_size.s3 + x];
  const long position = y * out_size.s3 + x;
  for (long image = 0; image < out_size.s0; ++image) {
    const long grad_plane = grad_base + image * grad_stride.s0 + channel * grad_stride.s1;
    const long indices_plane =
        indices_base + image * indices_stride.s0 + channel * indices_stride.s1;
    compute_t sum = 0;
    for (long oy = oy_first; oy < oy_first + oy_count; ++oy) {
      const long row_taps = y - rows[oy];
      for (long ox = ox_first; ox < ox_first + ox_count; ++ox) {
        const compute_t gradient =
            LOAD(grad, grad_plane + oy * grad_stride.s2 + ox * grad_stride.s3);
        if (average == 0) {
          const long at = indices_plane + oy * indices_stride.s2 + ox * indices_stride.s3;
          if (indices[at] == position) sum += gradient;
          continue;
        }
        const long col_taps = x - cols[ox];
        if (row_taps < 0 || row_taps >= rows[grad_size.s2 + oy] * step.s0 || row_taps % step.s0 ||
            col_taps < 0 || col_taps >= cols[grad_size.s3 + ox] * step.s1 || col_taps % step.s1) {
          continue;
        }
        const long divisor = divisor_override != 0
                                 ? divisor_override
                                 : rows[2 * grad_size.s2 + oy] * cols[2 * grad_size.s3 + ox];
        sum += gradient / (compute_t)divisor;
      }
    }
    STORE(out, out_base + at4((long4)(image, channel, y, x), out_stride), sum);
  }
}

// conv2d's gradient with respect to its input: grad_input[n, i, y, x] is the sum over the taps
// (r, s) and the output channels o of i's group of grad_output[n, o, oy, ox] *
// weight[o, i - the group's first channel, r, s], where (oy, ox) is the output whose window
// puts tap (r, s) at (y, x): oy = (y + padding - r * dilation) / stride where that divides
// exactly and lies in grad_output, likewise ox. In acc_t; a work-item per element of
// grad_input (out).
__kernel void conv2d_backward_input(const long total, __global elem_t* out, const long out_base,
                                    const long4 out_size, const long4 out_stride,
                                    __global const elem_t* grad, const long grad_base,
                                    const long4 grad_size, const long4 grad_stride,
                                    __global const elem_t* weight, const long weight_base,
                                    const long4 weight_size, const long4 weight_stride,
                                    const long2 stride, const long2 padding, const long2 dilation,
                                    const long out_per_group) {
  const long i = get_global_id(0);
  if (i >= total) return;
  const long4 c = unravel4(i, out_size);
  const long in_per_group = weight_size.s1;
  const long group = c.s1 / in_per_group;
  const long weight_channel = c.s1 - group * in_per_group;
  const long first_out = group * out_per_group;
  acc_t sum = 0;
  for (long r = 0; r < weight_size.s2; ++r) {
    const long row_reach = c.s2 + padding.s0 - r * dilation.s0;
    if (row_reach < 0 || row_reach % stride.s0 != 0) continue;
    const long oy = row_reach / stride.s0;
    if (oy >= grad_size.s2) continue;
    for (long s = 0; s < weight_size.s3; ++s) {
      const long col_reach = c.s3 + padding.s1 - s * dilation.s1;
      if (col_reach < 0 || col_reach % stride.s1 != 0) continue;
      const long ox = col_reach / stride.s1;
      if (ox >= grad_size.s3) continue;
      const long grad_at =
          grad_base + c.s0 * grad_stride.s0 + oy * grad_stride.s2 + ox * grad_stride.s3;
      const long weight_at = weight_base + weight_channel * weight_stride.s1 +
                             r * weight_stride.s2 + s * weight_stride.s3;
      for (long o = first_out; o < first_out + out_per_group; ++o) {
        sum += (acc_t)LOAD(grad, grad_at + o * grad_stride.s1) *
               (acc_t)LOAD(weight, weight_at + o * weight_stride.s0);
      }
    }
  }
  STORE(out, out_base + at4(c, out_stride), sum);
}

// conv2d's gradient with respect to its weight: grad_weight[o, i, r, s] is the sum over the
// images n and the outputs (oy, ox) of grad_output[n, o, oy, ox] * input[n, the group's first
// channel + i, oy * stride - padding + r * dilation, ...] where that lies in the input. In acc_t;
// a work-item per element of grad_weight (out), so that no two work-items add to one sum.
__kernel void conv2d_backward_weight(const long total, __global elem_t* out, const long out_base,
                                     const long4 out_size, const long4 out_stride,
                                     __global const elem_t* grad, const long grad_base,
                                     const long4 grad_size, const long4 grad_stride,
                                     __global const elem_t* in, const long in_base,
                                     const long4 in_size, const long4 in_stride, const long2 stride,
                                     const long2 padding, const long2 dilation,
                                     const long out_per_group) {
  const long i = get_global_id(0);
  if (i >= total) return;
  const long4 c = unravel4(i, out_size);
  const long channel = c.s0 / out_per_group * out_size.s1 + c.s1;
  const long top = c.s2 * dilation.s0 - padding.s0;
  const long left = c.s3 * dilation.s1 - padding.s1;
  acc_t sum = 0;
  for (long image = 0; image < grad_size.s0; ++image) {
    const long grad_plane = grad_base + image * grad_stride.s0 + c.s0 * grad_stride.s1;
    const long in_plane = in_base + image * in_stride.s0 + channel * in_stride.s1;
    for (long oy = 0; oy < grad_size.s2; ++oy) {
      const long y = top + oy * stride.s0;
      if (y < 0 || y >= in_size.s2) continue;
      for (long ox = 0; ox < grad_size.s3; ++ox) {
        const long x = left + ox * stride.s1;
        if (x < 0 || x >= in_size.s3) continue;
        sum += (acc_t)LOAD(grad, grad_plane + oy * grad_stride.s2 + ox * grad_stride.s3) *
               (acc_t)LOAD(in, in_plane + y * in_stride.s2 + x * in_stride.s3);
      }
    }
  }
  STORE(out, out_base + at4(c, out_stride), sum);
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
