// softmax, log_softmax, layer norm and RMS norm: each group is normalised by statistics of its own
// members. Floating dtypes only.

// softmax (log_softmax when `logarithm`) along the reduced dimension. Subtracting the group's
// maximum first keeps exp from overflowing; a NaN member makes the whole group NaN. Each lane
// takes its members 8 at a time (one exp of a vector), then the rest one by one.
__kernel void softmax(GROUP_PARAMS, GROUPED(__global const elem_t, in),
                      GROUPED(__global elem_t, out), const int logarithm) {
  __local compute_t scratch_max[WG_SIZE];
  __local acc_t scratch_sum[WG_SIZE];
  const long octets = group_size / 8;
  for (long first = FIRST_GROUP; first < groups; first += NEXT_GROUPS) {
    const long g = first + SLOT;
    const bool active = g < groups;
    const long8 gc = unravel(active ? g : 0, kept_ndim, kept_size);
    const long in_start = GROUP_AT(in, gc);
    const long out_start = GROUP_AT(out, gc);

    compute_t max = -INFINITY;
    for (long p = LANE; active && p < group_size; p += LANES) {
      max = MAX_NAN(max, LOAD_MEMBER(in, in_start, p));
    }
    max = max_lanes(max, scratch_max);

    acc_t total = 0;
    for (long o = LANE; active && o < octets; o += LANES) {
      const compute8_t e = exp(LOAD_MEMBERS8(in, in_start, o * 8) - max);
      total += SUM8(e);
    }
    for (long p = octets * 8 + LANE; active && p < group_size; p += LANES) {
      total += exp(LOAD_MEMBER(in, in_start, p) - max);
    }
    const compute_t sum = (compute_t)sum_lanes(total, scratch_sum);
    const compute_t log_sum = log(sum);

    for (long o = LANE; active && o < octets; o += LANES) {
      const compute8_t shifted = LOAD_MEMBERS8(in, in_start, o * 8) - max;
      STORE_MEMBERS8(out, out_start, o * 8, logarithm ? shifted - log_sum : exp(shifted) / sum);
    }
    for (long p = octets * 8 + LANE; active && p < group_size; p += LANES) {
      const compute_t shifted = LOAD_MEMBER(in, in_start, p) - max;
      STORE(out, out_start + MEMBER_OFFSET(out, p),
            logarithm ? shifted - log_sum : exp(shifted) / sum);
    }
  }
}

// softmax (log_softmax) of groups lying side by side (kernels/groups.cl) in the input and the
// output, for CPU devices: softmax's three passes over 8 groups at once. Written over its input,
// a block overlapping the one before may read that block's outputs in the lanes it skips: those
// lanes are not stored, and each lane's statistics are its own.
__kernel void softmax_side_by_side(GROUP_PARAMS, GROUPED(__global const elem_t, in),
                                   GROUPED(__global elem_t, out), const int logarithm) {
  SIDE_BY_SIDE_BLOCK
  const long in_start = GROUP_AT(in, gc), out_start = GROUP_AT(out, gc);
  compute8_t max = -INFINITY;
  for (long p = 0; p < group_size; ++p) {
    const long at = in_start + MEMBER_OFFSET(in, p);
    max = MAX_NAN(max, LOAD_SIDE8(compute8_t, compute_t, in, at));
  }
  acc8_t total = 0;
  for (long p = 0; p < group_size; ++p) {
    const long at = in_start + MEMBER_OFFSET(in, p);
    total += CONVERT_ACC8(exp(LOAD_SIDE8(compute8_t, compute_t, in, at) - max));
  }
  const compute8_t sum = CONVERT_COMPUTE8(total);
  const compute8_t log_sum = log(sum);
  for (long p = 0; p < group_size; ++p) {
    const long at = in_start + MEMBER_OFFSET(in, p), to = out_start + MEMBER_OFFSET(out, p);
    const compute8_t shifted = LOAD_SIDE8(compute8_t, compute_t, in, at) - max;
    const compute8_t y = logarithm ? shifted - log_sum : exp(shifted) / sum;
    STORE_SIDE8(out, to, skip, y);
  }
}

// Layer norm over the trailing dimensions (the members): out = (x - mean) * rstd * weight + bias,
// with mean and rstd = 1 / sqrt(variance + eps) written per group. Two passes (mean, then the
// mean squared deviation) in acc_t stay accurate where E[x^2] - E[x]^2 would cancel.
__kernel void layer_norm(GROUP_PARAMS, GROUPED(__global const elem_t, in),
                         GROUPED(__global elem_t, out), PER_GROUP(__global elem_t, mean),
                         PER_GROUP(__global elem_t, rstd), PER_MEMBER(__global const elem_t, weight),
                         PER_MEMBER(__global const elem_t, bias), const int has_weight,
                         const int has_bias, const acc_t eps) {
  __local acc_t scratch[WG_SIZE];
  for (long first = FIRST_GROUP; first < groups; first += NEXT_GROUPS) {
    const long g = first + SLOT;
    const bool active = g < groups;
    const long8 gc = unravel(active ? g : 0, kept_ndim, kept_size);
    const long in_start = GROUP_AT(in, gc);
    const long out_start = GROUP_AT(out, gc);

    acc_t total = 0;
    for (long p = LANE; active && p < group_size; p += LANES) {
      total += LOAD_MEMBER(in, in_start, p);
    }
    const acc_t group_mean = sum_lanes(total, scratch) / (acc_t)group_size;

    acc_t squares = 0;
    for (long p = LANE; active && p < group_size; p += LANES) {
      const acc_t deviation = LOAD_MEMBER(in, in_start, p) - group_mean;
      squares += deviation * deviation;
    }
    const acc_t group_rstd =
        (acc_t)1 / sqrt(sum_lanes(squares, scratch) / (acc_t)group_size + eps);

    for (long p = LANE; active && p < group_size; p += LANES) {
      acc_t y = (LOAD_MEMBER(in, in_start, p) - group_mean) * group_rstd;
      if (has_weight) y *= LOAD_MEMBER(weight, weight_base, p);
      if (has_bias) y += LOAD_MEMBER(bias, bias_base, p);
      STORE(out, out_start + MEMBER_OFFSET(out, p), y);
    }
    if (active && LANE == 0) {
      STORE(mean, GROUP_AT(mean, gc), group_mean);
      STORE(rstd, GROUP_AT(rstd, gc), group_rstd);
    }
  }
}

// RMS norm over the trailing dimensions: out = x * rstd * weight, rstd = 1 / sqrt(mean(x^2) +
// eps), in acc_t.
__kernel void rms_norm(GROUP_PARAMS, GROUPED(__global const elem_t, in),
                       GROUPED(__global elem_t, out), PER_MEMBER(__global const elem_t, weight),
                       const int has_weight, const acc_t eps) {
  __local acc_t scratch[WG_SIZE];
  for (long first = FIRST_GROUP; first < groups; first += NEXT_GROUPS) {
    const long g = first + SLOT;
    const bool active = g < groups;
    const long8 gc = unravel(active ? g : 0, kept_ndim, kept_size);
    const long in_start = GROUP_AT(in, gc);
    const long out_start = GROUP_AT(out, gc);

    acc_t squares = 0;
    for (long p = LANE; active && p < group_size; p += LANES) {
      const acc_t x = LOAD_MEMBER(in, in_start, p);
      squares += x * x;
    }
    const acc_t group_rstd =
        (acc_t)1 / sqrt(sum_lanes(squares, scratch) / (acc_t)group_size + eps);

    for (long p = LANE; active && p < group_size; p += LANES) {
      // One unravel for the three operands: on PoCL 4.0 ms against 4.8 with a MEMBER_OFFSET
      // each (2048 rows of 2048 float32), where layer_norm's loop runs 7.0 ms against 13.3 the
      // other way round.
      const long8 mc = unravel(p, member_ndim, member_size);
      acc_t y = LOAD(in, in_start + MEMBER_AT(in, mc)) * group_rstd;
      if (has_weight) y *= LOAD(weight, weight_base + MEMBER_AT(weight, mc));
      STORE(out, out_start + MEMBER_AT(out, mc), y);
    }
  }
}
