// Reductions over any set of dimensions: sum and mean; amax, max.dim and argmax.
//
// Few long groups (a sum of everything) would leave most of the device idle, so the host may
// split each group's members into `parts` runs of `part_size` consecutive members: the kernels
// then reduce run r = g * parts + q (part q of group g) into a partial result, and a second
// kernel (sum_partials, max_partials) combines each group's partials in order. With parts == 1
// a run is a whole group and the kernels write the outputs themselves.
#define RUN_PARAMS const long parts, const long part_size

// A group's sum as sum and mean store it: the mean of nothing is 0 / 0 = NaN, as in PyTorch.
inline acc_t sum_or_mean(const acc_t total, const long group_size, const int average) {
  return average ? total / (acc_t)group_size : total;
}

// Stores a group's maximum and its position where max_ and max_partials are asked to.
#define STORE_MAXIMUM(gc, best, best_i)                          \
  do {                                                           \
    if (write_values) STORE(values, GROUP_AT(values, gc), best); \
    if (write_indices) indices[GROUP_AT(indices, gc)] = best_i;  \
  } while (0)
#define FOR_EACH_RUN for (long first = FIRST_GROUP; first < groups * parts; first += NEXT_GROUPS)
// In FOR_EACH_RUN: this slot's run r, whether it is one, its group's coordinates `gc`, and the
// members [begin, end) it reduces.
#define RUN_BOUNDS                                             \
  const long r = first + SLOT;                                 \
  const bool active = r < groups * parts;                      \
  const long g = active ? r / parts : 0;                       \
  const long8 gc = unravel(g, kept_ndim, kept_size);           \
  const long begin = active ? (r - g * parts) * part_size : 0; \
  const long end = min(begin + part_size, group_size);

__kernel void sum(GROUP_PARAMS, GROUPED(__global const elem_t, in), PER_GROUP(__global elem_t, out),
                  const int average, RUN_PARAMS, __global acc_t* partials) {
  __local acc_t scratch[WG_SIZE];
  const bool dense_members = DENSE_MEMBERS(in);
  FOR_EACH_RUN {
    RUN_BOUNDS
    const long start = GROUP_AT(in, gc);
    const long octets = (end - begin) / 8;
    acc8_t total8 = 0;
    FOR_EACH_OCTET(o, total8 += CONVERT_ACC8(LOAD_MEMBERS8(in, start, begin + o * 8));)
    acc_t total = SUM8(total8);
    for (long p = begin + octets * 8 + LANE; active && p < end; p += LANES) {
      total += (acc_t)LOAD_MEMBER(in, start, p);
    }
    total = sum_lanes(total, scratch);
    if (active && LANE == 0) {
      if (parts > 1) {
        partials[r] = total;
      } else {
        STORE(out, GROUP_AT(out, gc), sum_or_mean(total, group_size, average));
      }
    }
  }
}

// One work-item per group: the group's `parts` partial sums, added in order.
__kernel void sum_partials(const long groups, const int kept_ndim, const long8 kept_size,
                           const long group_size, PER_GROUP(__global elem_t, out),
                           const int average, const long parts, __global const acc_t* partials) {
  const long g = get_global_id(0);
  if (g >= groups) return;
  acc_t total = 0;
  for (long q = 0; q < parts; ++q) total += partials[g * parts + q];
  const long8 gc = unravel(g, kept_ndim, kept_size);
  STORE(out, GROUP_AT(out, gc), sum_or_mean(total, group_size, average));
}

// Sums (or means) over a tile of `octets` * 8 groups lying side by side (kernels/groups.cl).
TILE_FUNCTION void sum_tile(const long group_size, const int member_ndim, const long8 member_size,
                            __global const elem_t* in, const long8 in_member, const long in_start,
                            __global elem_t* out, const long out_start, const long out_stride,
                            const long skip, const int average, const int octets) {
  acc8_t total[TILE_OCTETS];
#pragma unroll
  for (int k = 0; k < octets; ++k) total[k] = 0;
  for (long p = 0; p < group_size; ++p) {
    const long at = in_start + MEMBER_OFFSET(in, p);
#pragma unroll
    for (int k = 0; k < octets; ++k) total[k] += CONVERT_ACC8(LOAD8(in, at + 8 * k));
  }
#pragma unroll
  for (int k = 0; k < octets; ++k) {
    const acc_t sums[8] = {total[k].s0, total[k].s1, total[k].s2, total[k].s3,
                           total[k].s4, total[k].s5, total[k].s6, total[k].s7};
    for (long j = max(skip - 8 * k, 0L); j < 8; ++j) {
      STORE(out, out_start + (8 * k + j) * out_stride, sum_or_mean(sums[j], group_size, average));
    }
  }
}

// Sums (or means) of groups lying side by side, for CPU devices: sum_side_by_side and
// sum_side_by_side_wide.
#define SUM_SIDE_BY_SIDE_PARAMS                                                      \
  GROUP_PARAMS, GROUPED(__global const elem_t, in), PER_GROUP(__global elem_t, out), \
      const int average
#define SUM_SIDE_BY_SIDE_ARGS                                                                    \
  group_size, member_ndim, member_size, in, in_member, GROUP_AT(in, gc), out, GROUP_AT(out, gc), \
      out_kept.s0, skip, average
SIDE_BY_SIDE_KERNELS(sum_side_by_side, SUM_SIDE_BY_SIDE_PARAMS, sum_tile, SUM_SIDE_BY_SIDE_ARGS)

// Whether (v at position i) is chosen over (best at position best_i): the larger value, NaN
// above everything, and the earlier position among equals, so that the result is the first
// maximum, as in PyTorch. A negative position means no value yet.
inline bool max_prefers(const compute_t v, const long i, const compute_t best, const long best_i) {
  if (i < 0) return false;
  if (best_i < 0) return true;
  if (IS_NAN(v)) return !IS_NAN(best) || i < best_i;
  if (IS_NAN(best)) return false;
  return v > best || (v == best && i < best_i);
}

// Whether the components of vector v are `best` (NaN matching NaN), as a mask.
#if IS_FLOATING
#define MATCHES8(v, best) (IS_NAN(best) ? isnan(v) : (v) == (best))
#define MATCHES(v, best) (IS_NAN(best) ? IS_NAN(v) : (v) == (best))
#else
#define MATCHES8(v, best) ((v) == (best))
#define MATCHES(v, best) ((v) == (best))
#endif

// The largest member of each group and its position in the group; each output is written only
// when asked for (amax wants values, argmax indices, max.dim both). Each lane takes the largest
// of its members 8 at a time (see FOR_EACH_OCTET), then, for the position, looks for the first
// of them that equals it: its members come in order, so that is the first maximum.
__kernel void max_(GROUP_PARAMS, GROUPED(__global const elem_t, in),
                   PER_GROUP(__global elem_t, values), PER_GROUP(__global long, indices),
                   const int write_values, const int write_indices, RUN_PARAMS,
                   __global compute_t* partial_values, __global long* partial_indices) {
  __local compute_t scratch_values[WG_SIZE];
  __local long scratch_indices[WG_SIZE];
  const bool dense_members = DENSE_MEMBERS(in);
  FOR_EACH_RUN {
    RUN_BOUNDS
    const long start = GROUP_AT(in, gc);
    const long octets = (end - begin) / 8;
    const long rest = begin + octets * 8;  // the first member past the octets
    const long lane_first = LANE < octets ? begin + LANE * 8 : rest + LANE;
    const bool lane_has_members = active && lane_first < end;
    compute_t best = lane_has_members ? LOAD_MEMBER(in, start, lane_first) : 0;
    compute8_t best8 = best;
    FOR_EACH_OCTET(o, best8 = MAX_NAN(best8, LOAD_MEMBERS8(in, start, begin + o * 8));)
    best = MAX_NAN(best, MAX8(best8));
    for (long p = rest + LANE; active && p < end; p += LANES) {
      best = MAX_NAN(best, LOAD_MEMBER(in, start, p));
    }
    // Lanes without members have no position (-1); with values only, any of a lane's positions
    // serves, since positions only break ties between lanes.
    long best_i = lane_has_members ? lane_first : -1;
    if (lane_has_members && write_indices) {
      best_i = -1;
      FOR_EACH_OCTET(o, {
        if (any(MATCHES8(LOAD_MEMBERS8(in, start, begin + o * 8), best))) {
          for (long p = begin + o * 8; best_i < 0; ++p) {
            if (MATCHES(LOAD_MEMBER(in, start, p), best)) best_i = p;
          }
          break;
        }
      })
      for (long p = rest + LANE; best_i < 0 && p < end; p += LANES) {
        if (MATCHES(LOAD_MEMBER(in, start, p), best)) best_i = p;
      }
      best = LOAD_MEMBER(in, start, best_i);  // itself: 0 and -0 match each other
    }
    // Lanes combine pairwise, as sum_lanes does.
    __local compute_t* slot_values = scratch_values + SLOT * LANES;
    __local long* slot_indices = scratch_indices + SLOT * LANES;
    slot_values[LANE] = best;
    slot_indices[LANE] = best_i;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (long step = LANES / 2; step > 0; step /= 2) {
      if (LANE < step && max_prefers(slot_values[LANE + step], slot_indices[LANE + step],
                                     slot_values[LANE], slot_indices[LANE])) {
        slot_values[LANE] = slot_values[LANE + step];
        slot_indices[LANE] = slot_indices[LANE + step];
      }
      barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (active && LANE == 0) {
      if (parts > 1) {
        partial_values[r] = slot_values[0];
        partial_indices[r] = slot_indices[0];
      } else {
        STORE_MAXIMUM(gc, slot_values[0], slot_indices[0]);
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);  // before scratch is used again
  }
}

// One work-item per group: the best of the group's `parts` partial maxima, by max_prefers, so
// that among equals (and NaNs) the earliest position wins, as in max_.
__kernel void max_partials(const long groups, const int kept_ndim, const long8 kept_size,
                           PER_GROUP(__global elem_t, values), PER_GROUP(__global long, indices),
                           const int write_values, const int write_indices, const long parts,
                           __global const compute_t* partial_values,
                           __global const long* partial_indices) {
  const long g = get_global_id(0);
  if (g >= groups) return;
  compute_t best = 0;
  long best_i = -1;
  for (long q = 0; q < parts; ++q) {
    const compute_t v = partial_values[g * parts + q];
    const long i = partial_indices[g * parts + q];
    if (max_prefers(v, i, best, best_i)) {
      best = v;
      best_i = i;
    }
  }
  const long8 gc = unravel(g, kept_ndim, kept_size);
  STORE_MAXIMUM(gc, best, best_i);
}
