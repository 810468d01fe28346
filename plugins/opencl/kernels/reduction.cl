// Reductions over any set of dimensions: sum and mean; amax, max.dim and argmax.

__kernel void sum(GROUP_PARAMS, GROUPED(__global const elem_t, in), PER_GROUP(__global elem_t, out),
                  const int average) {
  __local acc_t scratch[WG_SIZE];
  for (long first = FIRST_GROUP; first < groups; first += NEXT_GROUPS) {
    const long g = first + SLOT;
    const bool active = g < groups;
    const long8 gc = unravel(active ? g : 0, kept_ndim, kept_size);
    const long start = GROUP_AT(in, gc);
    acc_t total = 0;
    for (long p = LANE; active && p < group_size; p += LANES) {
      total += (acc_t)LOAD_MEMBER(in, start, p);
    }
    total = sum_lanes(total, scratch);
    // The mean of nothing is 0 / 0 = NaN, as in PyTorch.
    if (active && LANE == 0) {
      STORE(out, GROUP_AT(out, gc), average ? total / (acc_t)group_size : total);
    }
  }
}

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

// The largest member of each group and its position in the group; each output is written only
// when asked for (amax wants values, argmax indices, max.dim both).
__kernel void max_(GROUP_PARAMS, GROUPED(__global const elem_t, in),
                   PER_GROUP(__global elem_t, values), PER_GROUP(__global long, indices),
                   const int write_values, const int write_indices) {
  __local compute_t scratch_values[WG_SIZE];
  __local long scratch_indices[WG_SIZE];
  for (long first = FIRST_GROUP; first < groups; first += NEXT_GROUPS) {
    const long g = first + SLOT;
    const bool active = g < groups;
    const long8 gc = unravel(active ? g : 0, kept_ndim, kept_size);
    const long start = GROUP_AT(in, gc);
    compute_t best = 0;
    long best_i = -1;
    for (long p = LANE; active && p < group_size; p += LANES) {
      const compute_t v = LOAD_MEMBER(in, start, p);
      if (max_prefers(v, p, best, best_i)) {
        best = v;
        best_i = p;
      }
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
      if (write_values) STORE(values, GROUP_AT(values, gc), slot_values[0]);
      if (write_indices) indices[GROUP_AT(indices, gc)] = slot_indices[0];
    }
    barrier(CLK_LOCAL_MEM_FENCE);  // before scratch is used again
  }
}
