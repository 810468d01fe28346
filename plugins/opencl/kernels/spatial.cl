// conv2d and the 2-D pooling ops over (N, C, H, W) views of any strides, one work-item per
// output element. Floating dtypes only. Sizes and strides come as long4 vectors in (N, C, H, W)
// order.

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
// accumulated in acc_t. Taps in the padding contribute nothing.
__kernel void conv2d(const long total, __global elem_t* out, const long out_base, const long4 out_size,
                     const long4 out_stride, __global const elem_t* in, const long in_base,
                     const long4 in_size, const long4 in_stride, __global const elem_t* weight,
                     const long weight_base, const long4 weight_size, const long4 weight_stride,
                     __global const elem_t* bias, const long bias_base, const long bias_stride,
                     const int has_bias, const long2 stride, const long2 padding,
                     const long2 dilation, const long out_per_group) {
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
// `divisor_override` when that is not 0.
__kernel void pool2d(const long total, __global elem_t* out, const long out_base, const long4 out_size,
                     const long4 out_stride, __global const elem_t* in, const long in_base,
                     const long4 in_stride, __global const long* axes, const long2 step,
                     const int average, const long divisor_override) {
  const long i = get_global_id(0);
  if (i >= total) return;
  const long4 c = unravel4(i, out_size);
  __global const long* rows = axes;                   // first, count, divisor: out_size.s2 each
  __global const long* cols = axes + 3 * out_size.s2;  // and out_size.s3 each
  const long row_first = rows[c.s2], row_count = rows[out_size.s2 + c.s2];
  const long col_first = cols[c.s3], col_count = cols[out_size.s3 + c.s3];
  const long plane = in_base + c.s0 * in_stride.s0 + c.s1 * in_stride.s1;
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
      for (long k = 0; k < col_count; ++k) sum += LOAD(in, row + (col_first + k * step.s1) * in_stride.s3);
    }
    const long divisor = divisor_override != 0
                             ? divisor_override
                             : rows[2 * out_size.s2 + c.s2] * cols[2 * out_size.s3 + c.s3];
    result = sum / (compute_t)divisor;
  }
  STORE(out, out_base + at4(c, out_stride), result);
}
