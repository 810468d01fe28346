// softmax, log_softmax, layer norm and RMS norm: each group is normalised by statistics of its own
// members. Floating dtypes only.

// Whether elem_t holds every compute_t value exactly (not so float16 and bfloat16).
#define EXACT_IN_ELEM (DTYPE == DT_FLOAT32 || DTYPE == DT_FLOAT64)

// softmax (log_softmax when `logarithm`) along the reduced dimension. Subtracting the group's
// maximum first keeps exp from overflowing; a NaN member makes the whole group NaN.
__kernel void softmax(GROUP_PARAMS, GROUPED(__global const elem_t, in),
                      GROUPED(__global elem_t, out), const int logarithm) {
  __local compute_t scratch_max[WG_SIZE];
  __local acc_t scratch_sum[WG_SIZE];
  const long octets = group_size / 8;
  const bool dense_members = DENSE_MEMBERS(in) && DENSE_MEMBERS(out);
  for (long first = FIRST_GROUP; first < groups; first += NEXT_GROUPS) {
    const long g = first + SLOT;
    const bool active = g < groups;
    const long8 gc = unravel(active ? g : 0, kept_ndim, kept_size);
    const long in_start = GROUP_AT(in, gc);
    const long out_start = GROUP_AT(out, gc);

    compute8_t max8 = -INFINITY;
    FOR_EACH_OCTET(o, max8 = MAX_NAN(max8, LOAD_MEMBERS8(in, in_start, o * 8));)
    compute_t max = MAX8(max8);
    FOR_EACH_MEMBER_PAST_OCTETS(p) max = MAX_NAN(max, LOAD_MEMBER(in, in_start, p));
    max = max_lanes(max, scratch_max);

    // Where out holds the compute type exactly, softmax stores each exp in out as it sums them,
    // and the last pass divides what it reads back (from the cache, for rows that fit) instead of
    // taking exp again. Each lane rereads only what it wrote, so out may be in.
    const bool exps_in_out = !logarithm && EXACT_IN_ELEM;
    acc8_t total8 = 0;
    FOR_EACH_OCTET(o, {
      const compute8_t weights = exp(LOAD_MEMBERS8(in, in_start, o * 8) - max);
      total8 += CONVERT_ACC8(weights);
      if (exps_in_out) STORE_MEMBERS8(out, out_start, o * 8, weights);
    })
    acc_t total = SUM8(total8);
    FOR_EACH_MEMBER_PAST_OCTETS(p) total += exp(LOAD_MEMBER(in, in_start, p) - max);
    const compute_t sum = (compute_t)sum_lanes(total, scratch_sum);
    const compute_t log_sum = log(sum);

    if (exps_in_out) {
      FOR_EACH_OCTET(o, {
        const compute8_t weights = LOAD_MEMBERS8(out, out_start, o * 8);
        STORE_MEMBERS8(out, out_start, o * 8, weights / sum);
      })
    } else {
      FOR_EACH_OCTET(o, {
        const compute8_t shifted = LOAD_MEMBERS8(in, in_start, o * 8) - max;
        STORE_MEMBERS8(out, out_start, o * 8, logarithm ? shifted - log_sum : exp(shifted) / sum);
      })
    }
    FOR_EACH_MEMBER_PAST_OCTETS(p) {
      const compute_t shifted = LOAD_MEMBER(in, in_start, p) - max;
      STORE(out, out_start + MEMBER_OFFSET(out, p),
            logarithm ? shifted - log_sum : exp(shifted) / sum);
    }
  }
}

// softmax (log_softmax) over a tile of `octets` * 8 groups lying side by side in the input and
// the output (kernels/groups.cl): softmax's three passes over all of them at once. Written over
// its input, a tile overlapping the one before may read that tile's outputs in the groups it
// skips: those are not stored, and each group's statistics are its own.
TILE_FUNCTION void softmax_tile(const long group_size, const int member_ndim,
                                const long8 member_size, __global const elem_t* in,
                                const long8 in_member, const long in_start, __global elem_t* out,
                                const long8 out_member, const long out_start, const long skip,
                                const int logarithm, const int octets) {
  compute8_t max[TILE_OCTETS];
#pragma unroll
  for (int k = 0; k < octets; ++k) max[k] = -INFINITY;
  for (long p = 0; p < group_size; ++p) {
    const long at = in_start + MEMBER_OFFSET(in, p);
#pragma unroll
    for (int k = 0; k < octets; ++k) max[k] = MAX_NAN(max[k], LOAD8(in, at + 8 * k));
  }
  // Each exp kept in out between the passes, as in softmax.
  const bool exps_in_out = !logarithm && EXACT_IN_ELEM;
  acc8_t total[TILE_OCTETS];
#pragma unroll
  for (int k = 0; k < octets; ++k) total[k] = 0;
  for (long p = 0; p < group_size; ++p) {
    const long at = in_start + MEMBER_OFFSET(in, p), to = out_start + MEMBER_OFFSET(out, p);
#pragma unroll
    for (int k = 0; k < octets; ++k) {
      const compute8_t weights = exp(LOAD8(in, at + 8 * k) - max[k]);
      total[k] += CONVERT_ACC8(weights);
      if (exps_in_out) STORE_TILE_OCTET(out, to, k, weights);
    }
  }
  compute8_t sum[TILE_OCTETS], log_sum[TILE_OCTETS];
#pragma unroll
  for (int k = 0; k < octets; ++k) {
    sum[k] = CONVERT_COMPUTE8(total[k]);
    log_sum[k] = log(sum[k]);
  }
  for (long p = 0; p < group_size; ++p) {
    const long at = in_start + MEMBER_OFFSET(in, p), to = out_start + MEMBER_OFFSET(out, p);
#pragma unroll
    for (int k = 0; k < octets; ++k) {
      compute8_t y;
      if (exps_in_out) {
        y = LOAD8(out, to + 8 * k) / sum[k];
      } else {
        const compute8_t shifted = LOAD8(in, at + 8 * k) - max[k];
        y = logarithm ? shifted - log_sum[k] : exp(shifted) / sum[k];
      }
      STORE_TILE_OCTET(out, to, k, y);
    }
  }
}

// softmax (log_softmax) of groups lying side by side, for CPU devices: softmax_side_by_side and
// softmax_side_by_side_wide.
#define SOFTMAX_SIDE_BY_SIDE_PARAMS                                                \
  GROUP_PARAMS, GROUPED(__global const elem_t, in), GROUPED(__global elem_t, out), \
      const int logarithm
#define SOFTMAX_SIDE_BY_SIDE_ARGS                                                         \
  group_size, member_ndim, member_size, in, in_member, GROUP_AT(in, gc), out, out_member, \
      GROUP_AT(out, gc), skip, logarithm
SIDE_BY_SIDE_KERNELS(softmax_side_by_side, SOFTMAX_SIDE_BY_SIDE_PARAMS, softmax_tile,
                     SOFTMAX_SIDE_BY_SIDE_ARGS)

// Layer norm over the trailing dimensions (the members): out = (x - mean) * rstd * weight + bias,
// with mean and rstd = 1 / sqrt(variance + eps) written per group. Two passes (mean, then the
// mean squared deviation) in acc_t stay accurate where E[x^2] - E[x]^2 would cancel.
__kernel void layer_norm(GROUP_PARAMS, GROUPED(__global const elem_t, in),
                         GROUPED(__global elem_t, out), PER_GROUP(__global elem_t, mean),
                         PER_GROUP(__global elem_t, rstd),
                         PER_MEMBER(__global const elem_t, weight),
                         PER_MEMBER(__global const elem_t, bias), const int has_weight,
                         const int has_bias, const acc_t eps) {
  __local acc_t scratch[WG_SIZE];
  const long octets = group_size / 8;
  const bool dense_members = DENSE_MEMBERS(in) && DENSE_MEMBERS(out) &&
                             (!has_weight || DENSE_MEMBERS(weight)) &&
                             (!has_bias || DENSE_MEMBERS(bias));
  for (long first = FIRST_GROUP; first < groups; first += NEXT_GROUPS) {
    const long g = first + SLOT;
    const bool active = g < groups;
    const long8 gc = unravel(active ? g : 0, kept_ndim, kept_size);
    const long in_start = GROUP_AT(in, gc);
    const long out_start = GROUP_AT(out, gc);

    acc8_t total8 = 0;
    FOR_EACH_OCTET(o, total8 += CONVERT_ACC8(LOAD_MEMBERS8(in, in_start, o * 8));)
    acc_t total = SUM8(total8);
    FOR_EACH_MEMBER_PAST_OCTETS(p) total += LOAD_MEMBER(in, in_start, p);
    const acc_t group_mean = sum_lanes(total, scratch) / (acc_t)group_size;

    acc8_t squares8 = 0;
    FOR_EACH_OCTET(o, {
      const acc8_t deviation = CONVERT_ACC8(LOAD_MEMBERS8(in, in_start, o * 8)) - group_mean;
      squares8 += deviation * deviation;
    })
    acc_t squares = SUM8(squares8);
    FOR_EACH_MEMBER_PAST_OCTETS(p) {
      const acc_t deviation = LOAD_MEMBER(in, in_start, p) - group_mean;
      squares += deviation * deviation;
    }
    const acc_t group_rstd = (acc_t)1 / sqrt(sum_lanes(squares, scratch) / (acc_t)group_size + eps);

    FOR_EACH_OCTET(o, {
      acc8_t y = (CONVERT_ACC8(LOAD_MEMBERS8(in, in_start, o * 8)) - group_mean) * group_rstd;
      if (has_weight) y *= CONVERT_ACC8(LOAD_MEMBERS8(weight, weight_base, o * 8));
      if (has_bias) y += CONVERT_ACC8(LOAD_MEMBERS8(bias, bias_base, o * 8));
      STORE_MEMBERS8(out, out_start, o * 8, CONVERT_COMPUTE8(y));
    })
    FOR_EACH_MEMBER_PAST_OCTETS(p) {
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
  const long octets = group_size / 8;
  const bool dense_members =
      DENSE_MEMBERS(in) && DENSE_MEMBERS(out) && (!has_weight || DENSE_MEMBERS(weight));
  for (long first = FIRST_GROUP; first < groups; first += NEXT_GROUPS) {
    const long g = first + SLOT;
    const bool active = g < groups;
    const long8 gc = unravel(active ? g : 0, kept_ndim, kept_size);
    const long in_start = GROUP_AT(in, gc);
    const long out_start = GROUP_AT(out, gc);

    acc8_t squares8 = 0;
    FOR_EACH_OCTET(o, {
      const acc8_t x = CONVERT_ACC8(LOAD_MEMBERS8(in, in_start, o * 8));
      squares8 += x * x;
    })
    acc_t squares = SUM8(squares8);
    FOR_EACH_MEMBER_PAST_OCTETS(p) {
      const acc_t x = LOAD_MEMBER(in, in_start, p);
      squares += x * x;
    }
    const acc_t group_rstd = (acc_t)1 / sqrt(sum_lanes(squares, scratch) / (acc_t)group_size + eps);

    FOR_EACH_OCTET(o, {
      acc8_t y = CONVERT_ACC8(LOAD_MEMBERS8(in, in_start, o * 8)) * group_rstd;
      if (has_weight) y *= CONVERT_ACC8(LOAD_MEMBERS8(weight, weight_base, o * 8));
      STORE_MEMBERS8(out, out_start, o * 8, CONVERT_COMPUTE8(y));
    })
    FOR_EACH_MEMBER_PAST_OCTETS(p) {
      acc_t y = LOAD_MEMBER(in, in_start, p) * group_rstd;
      if (has_weight) y *= LOAD_MEMBER(weight, weight_base, p);
      STORE(out, out_start + MEMBER_OFFSET(out, p), y);
    }
  }
}
