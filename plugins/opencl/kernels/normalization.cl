// softmax, log_softmax, layer norm and RMS norm: each group is normalised by statistics of its own
// members; batch norm in training mode, whose groups are the channels; and their gradients.
// Floating dtypes only.

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

// --- gradients and batch statistics -----------------------------------------------------------

// softmax's gradient from its output y (log_softmax's when `logarithm`, y being log p):
// grad_input = y (g - sum(g y)), or g - exp(y) sum(g), with g grad_output and the sum over the
// group in acc_t.
__kernel void softmax_backward(GROUP_PARAMS, GROUPED(__global const elem_t, grad),
                               GROUPED(__global const elem_t, y), GROUPED(__global elem_t, out),
                               const int logarithm) {
  __local acc_t scratch[WG_SIZE];
  const long octets = group_size / 8;
  const bool dense_members = DENSE_MEMBERS(grad) && DENSE_MEMBERS(y) && DENSE_MEMBERS(out);
  for (long first = FIRST_GROUP; first < groups; first += NEXT_GROUPS) {
    const long g = first + SLOT;
    const bool active = g < groups;
    const long8 gc = unravel(active ? g : 0, kept_ndim, kept_size);
    const long grad_start = GROUP_AT(grad, gc);
    const long y_start = GROUP_AT(y, gc);
    const long out_start = GROUP_AT(out, gc);

    acc8_t total8 = 0;
    FOR_EACH_OCTET(o, {
      const acc8_t gradients = CONVERT_ACC8(LOAD_MEMBERS8(grad, grad_start, o * 8));
      total8 += logarithm ? gradients : gradients * CONVERT_ACC8(LOAD_MEMBERS8(y, y_start, o * 8));
    })
    acc_t total = SUM8(total8);
    FOR_EACH_MEMBER_PAST_OCTETS(p) {
      const acc_t gradient = LOAD_MEMBER(grad, grad_start, p);
      total += logarithm ? gradient : gradient * LOAD_MEMBER(y, y_start, p);
    }
    const compute_t sum = (compute_t)sum_lanes(total, scratch);

    FOR_EACH_OCTET(o, {
      const compute8_t gradients = LOAD_MEMBERS8(grad, grad_start, o * 8);
      const compute8_t outputs = LOAD_MEMBERS8(y, y_start, o * 8);
      STORE_MEMBERS8(out, out_start, o * 8,
                     logarithm ? gradients - exp(outputs) * sum : outputs * (gradients - sum));
    })
    FOR_EACH_MEMBER_PAST_OCTETS(p) {
      const compute_t gradient = LOAD_MEMBER(grad, grad_start, p);
      const compute_t output = LOAD_MEMBER(y, y_start, p);
      STORE(out, out_start + MEMBER_OFFSET(out, p),
            logarithm ? gradient - exp(output) * sum : output * (gradient - sum));
    }
  }
}

// Layer norm's gradient with respect to its input, per group (a row of the leading dims): with
// x^ = (x - mean) rstd and h = g w (g without a weight), grad_input = rstd (h - mean(h) -
// x^ mean(h x^)), the means over the group in acc_t.
__kernel void layer_norm_backward(GROUP_PARAMS, GROUPED(__global const elem_t, grad),
                                  GROUPED(__global const elem_t, in), GROUPED(__global elem_t, out),
                                  PER_GROUP(__global const elem_t, mean),
                                  PER_GROUP(__global const elem_t, rstd),
                                  PER_MEMBER(__global const elem_t, weight), const int has_weight) {
  __local acc_t scratch[WG_SIZE];
  for (long first = FIRST_GROUP; first < groups; first += NEXT_GROUPS) {
    const long g = first + SLOT;
    const bool active = g < groups;
    const long8 gc = unravel(active ? g : 0, kept_ndim, kept_size);
    const long grad_start = GROUP_AT(grad, gc);
    const long in_start = GROUP_AT(in, gc);
    const long out_start = GROUP_AT(out, gc);
    const acc_t group_mean = LOAD(mean, GROUP_AT(mean, gc));
    const acc_t group_rstd = LOAD(rstd, GROUP_AT(rstd, gc));

    acc_t h_total = 0, hx_total = 0;
    for (long p = LANE; active && p < group_size; p += LANES) {
      acc_t h = LOAD_MEMBER(grad, grad_start, p);
      if (has_weight) h *= LOAD_MEMBER(weight, weight_base, p);
      h_total += h;
      hx_total += h * (LOAD_MEMBER(in, in_start, p) - group_mean) * group_rstd;
    }
    const acc_t h_mean = sum_lanes(h_total, scratch) / (acc_t)group_size;
    const acc_t hx_mean = sum_lanes(hx_total, scratch) / (acc_t)group_size;

    for (long p = LANE; active && p < group_size; p += LANES) {
      acc_t h = LOAD_MEMBER(grad, grad_start, p);
      if (has_weight) h *= LOAD_MEMBER(weight, weight_base, p);
      const acc_t normalized = (LOAD_MEMBER(in, in_start, p) - group_mean) * group_rstd;
      STORE(out, out_start + MEMBER_OFFSET(out, p),
            group_rstd * (h - h_mean - normalized * hx_mean));
    }
  }
}

// Layer norm's gradients with respect to its weight and bias, per group (a position of the
// normalised dims) over its members (the rows of the leading dims, each with its mean and rstd):
// the sums of g x^ and of g, in acc_t.
__kernel void layer_norm_backward_parameters(GROUP_PARAMS, GROUPED(__global const elem_t, grad),
                                             GROUPED(__global const elem_t, in),
                                             PER_MEMBER(__global const elem_t, mean),
                                             PER_MEMBER(__global const elem_t, rstd),
                                             PER_GROUP(__global elem_t, grad_weight),
                                             PER_GROUP(__global elem_t, grad_bias)) {
  __local acc_t scratch[WG_SIZE];
  for (long first = FIRST_GROUP; first < groups; first += NEXT_GROUPS) {
    const long g = first + SLOT;
    const bool active = g < groups;
    const long8 gc = unravel(active ? g : 0, kept_ndim, kept_size);
    const long grad_start = GROUP_AT(grad, gc);
    const long in_start = GROUP_AT(in, gc);

    acc_t weight_total = 0, bias_total = 0;
    for (long p = LANE; active && p < group_size; p += LANES) {
      const acc_t gradient = LOAD_MEMBER(grad, grad_start, p);
      const acc_t normalized =
          ((acc_t)LOAD_MEMBER(in, in_start, p) - LOAD_MEMBER(mean, mean_base, p)) *
          LOAD_MEMBER(rstd, rstd_base, p);
      weight_total += gradient * normalized;
      bias_total += gradient;
    }
    weight_total = sum_lanes(weight_total, scratch);
    bias_total = sum_lanes(bias_total, scratch);
    if (active && LANE == 0) {
      STORE(grad_weight, GROUP_AT(grad_weight, gc), weight_total);
      STORE(grad_bias, GROUP_AT(grad_bias, gc), bias_total);
    }
  }
}

// Batch norm in training mode, per group (a channel) over its members (every other dim): the
// batch's mean and invstd = 1 / sqrt(biased variance + eps), two passes in acc_t as in
// layer_norm, written per channel; out = (x - mean) invstd weight + bias.
__kernel void batch_norm_training(GROUP_PARAMS, GROUPED(__global const elem_t, in),
                                  GROUPED(__global elem_t, out), PER_GROUP(__global elem_t, mean),
                                  PER_GROUP(__global elem_t, invstd),
                                  PER_GROUP(__global const elem_t, weight),
                                  PER_GROUP(__global const elem_t, bias), const int has_weight,
                                  const int has_bias, const acc_t eps) {
  __local acc_t scratch[WG_SIZE];
  for (long first = FIRST_GROUP; first < groups; first += NEXT_GROUPS) {
    const long g = first + SLOT;
    const bool active = g < groups;
    const long8 gc = unravel(active ? g : 0, kept_ndim, kept_size);
    const long in_start = GROUP_AT(in, gc);
    const long out_start = GROUP_AT(out, gc);

    acc_t total = 0;
    for (long p = LANE; active && p < group_size; p += LANES) total += LOAD_MEMBER(in, in_start, p);
    const acc_t channel_mean = sum_lanes(total, scratch) / (acc_t)group_size;
    acc_t squares = 0;
    for (long p = LANE; active && p < group_size; p += LANES) {
      const acc_t deviation = LOAD_MEMBER(in, in_start, p) - channel_mean;
      squares += deviation * deviation;
    }
    const acc_t channel_invstd =
        (acc_t)1 / sqrt(sum_lanes(squares, scratch) / (acc_t)group_size + eps);

    acc_t scale = channel_invstd, shift = 0;
    if (active && has_weight) scale *= LOAD(weight, GROUP_AT(weight, gc));
    if (active && has_bias) shift = LOAD(bias, GROUP_AT(bias, gc));
    for (long p = LANE; active && p < group_size; p += LANES) {
      STORE(out, out_start + MEMBER_OFFSET(out, p),
            (LOAD_MEMBER(in, in_start, p) - channel_mean) * scale + shift);
    }
    if (active && LANE == 0) {
      STORE(mean, GROUP_AT(mean, gc), channel_mean);
      STORE(invstd, GROUP_AT(invstd, gc), channel_invstd);
    }
  }
}

// Batch norm's gradients per group (a channel) over its members, with the statistics the forward
// normalised with: the batch's mean and invstd (`train`), or the running mean and 1 /
// sqrt(running variance + eps), read from `spread`. With x^ = (x - mean) invstd and M members:
// grad_weight = sum(g x^), grad_bias = sum(g), and grad_input = weight invstd (g - sum(g) / M -
// x^ sum(g x^) / M) when training, weight invstd g otherwise. Sums in acc_t.
__kernel void batch_norm_backward(GROUP_PARAMS, GROUPED(__global const elem_t, grad),
                                  GROUPED(__global const elem_t, in), GROUPED(__global elem_t, out),
                                  PER_GROUP(__global const elem_t, mean),
                                  PER_GROUP(__global const elem_t, spread),
                                  PER_GROUP(__global const elem_t, weight),
                                  PER_GROUP(__global elem_t, grad_weight),
                                  PER_GROUP(__global elem_t, grad_bias), const int has_weight,
                                  const int train, const acc_t eps) {
  __local acc_t scratch[WG_SIZE];
  for (long first = FIRST_GROUP; first < groups; first += NEXT_GROUPS) {
    const long g = first + SLOT;
    const bool active = g < groups;
    const long8 gc = unravel(active ? g : 0, kept_ndim, kept_size);
    const long grad_start = GROUP_AT(grad, gc);
    const long in_start = GROUP_AT(in, gc);
    const long out_start = GROUP_AT(out, gc);
    acc_t channel_mean = 0, invstd = 0, scale = 1;
    if (active) {
      channel_mean = LOAD(mean, GROUP_AT(mean, gc));
      const acc_t s = LOAD(spread, GROUP_AT(spread, gc));
      invstd = train ? s : (acc_t)1 / sqrt(s + eps);
      if (has_weight) scale = LOAD(weight, GROUP_AT(weight, gc));
    }

    acc_t g_total = 0, gx_total = 0;
    for (long p = LANE; active && p < group_size; p += LANES) {
      const acc_t gradient = LOAD_MEMBER(grad, grad_start, p);
      g_total += gradient;
      gx_total += gradient * (LOAD_MEMBER(in, in_start, p) - channel_mean);
    }
    g_total = sum_lanes(g_total, scratch);
    gx_total = sum_lanes(gx_total, scratch) * invstd;  // sum(g x^)

    const acc_t g_mean = g_total / (acc_t)group_size;
    const acc_t gx_mean = gx_total / (acc_t)group_size;
    for (long p = LANE; active && p < group_size; p += LANES) {
      const acc_t gradient = LOAD_MEMBER(grad, grad_start, p);
      acc_t dx = gradient;
      if (train) {
        const acc_t normalized = (LOAD_MEMBER(in, in_start, p) - channel_mean) * invstd;
        dx = gradient - g_mean - normalized * gx_mean;
      }
      STORE(out, out_start + MEMBER_OFFSET(out, p), dx * scale * invstd);
    }
    if (active && LANE == 0) {
      STORE(grad_weight, GROUP_AT(grad_weight, gc), gx_total);
      STORE(grad_bias, GROUP_AT(grad_bias, gc), g_total);
    }
  }
}
