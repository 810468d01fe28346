// What group kernels share (reductions, softmax, layer norm). The input's dimensions split into
// kept ones, whose indices number the groups, and reduced ones, whose indices number the
// members of a group in row-major order; the host collapses each set as it does elementwise
// shapes. A work-group is LANES x SLOTS work-items (WG_SIZE in all): LANES of them (a power of
// two) share one group, and SLOTS groups run side by side. With one lane a work-item walks its
// group alone, which suits many small groups; many lanes suit few large ones.

#define LANES ((long)get_local_size(0))
#define LANE ((long)get_local_id(0))
#define SLOTS ((long)get_local_size(1))
#define SLOT ((long)get_local_id(1))

#define GROUP_PARAMS                                                                    \
  const long groups, const int kept_ndim, const long8 kept_size, const long group_size, \
      const int member_ndim, const long8 member_size
// Operands addressed per group and member (the input), per group only (a reduction's output),
// or per member only (layer norm's weight and bias).
#define GROUPED(type, name) \
  type *name, const long name##_base, const long8 name##_kept, const long8 name##_member
#define PER_GROUP(type, name) type *name, const long name##_base, const long8 name##_kept
#define PER_MEMBER(type, name) type *name, const long name##_base, const long8 name##_member
#define GROUP_AT(name, gc) (name##_base + dot8(gc, name##_kept))
#define MEMBER_AT(name, mc) dot8(mc, name##_member)

// Group kernels loop:
//   for (long first = get_group_id(1) * SLOTS; first < groups; first += get_num_groups(1) * SLOTS)
// with g = first + SLOT; a work-item whose g is past the end stays in the loop (inactive) so
// that it reaches every barrier of its work-group.
#define FIRST_GROUP (get_group_id(1) * SLOTS)
#define NEXT_GROUPS (get_num_groups(1) * SLOTS)

// The offset of member p of a group in operand `name`, and that member of the group that starts
// at `start`, loaded. Members along one dimension (after merging: a row, a column) take one
// product instead of unravel's dot product of eight, which also lets PoCL vectorise loops over
// them; the branch is the same for the whole launch.
#define MEMBER_OFFSET(name, p) \
  (member_ndim <= 1 ? (p)*name##_member.s0 : MEMBER_AT(name, unravel(p, member_ndim, member_size)))
#define LOAD_MEMBER(name, start, p) LOAD(name, (start) + MEMBER_OFFSET(name, p))

// Lanes take the members of their group 8 at a time, as a vector: a math function of the vector
// (exp) runs as vector instructions where the driver's library has vector versions, as PoCL's
// does, and sums and maxima run in 8 independent lanes. Octet o holds members 8o to 8o + 7 (of
// a run, in reductions: see reduction.cl); a lane takes octets LANE, LANE + LANES, ..., then the
// members past the last whole octet one by one.
//
// FOR_EACH_OCTET(o, statements) runs the statements for each of this lane's `octets`, in one
// of two copies of the loop: one for kernels whose member operands are all dense
// (`dense_members`: members along one dimension, one element apart), where LOAD_MEMBERS8 and
// STORE_MEMBERS8 are one vector access each, and one for any layout. PoCL does not hoist that
// choice out of the loop itself.
#define FOR_EACH_OCTET(o, ...)                              \
  if (dense_members) {                                      \
    const bool dense_ = true;                               \
    for (long o = LANE; active && o < octets; o += LANES) { \
      __VA_ARGS__                                           \
    }                                                       \
  } else {                                                  \
    const bool dense_ = false;                              \
    for (long o = LANE; active && o < octets; o += LANES) { \
      __VA_ARGS__                                           \
    }                                                       \
  }
#define FOR_EACH_MEMBER_PAST_OCTETS(p) \
  for (long p = octets * 8 + LANE; active && p < group_size; p += LANES)
// Whether operand `name` lays the members out densely (see FOR_EACH_OCTET).
#define DENSE_MEMBERS(name) (member_ndim <= 1 && name##_member.s0 == 1)

// In FOR_EACH_OCTET: members p, ..., p + 7 of the group that starts at `start` in operand
// `name`, as a compute8_t vector, and (floating dtypes) a vector stored back to them.
#define LOAD_MEMBERS8(name, start, p)                                                          \
  (dense_ ? LOAD8(name, (start) + (p))                                                         \
          : (compute8_t)(LOAD_MEMBER(name, start, (p)), LOAD_MEMBER(name, start, (p) + 1),     \
                         LOAD_MEMBER(name, start, (p) + 2), LOAD_MEMBER(name, start, (p) + 3), \
                         LOAD_MEMBER(name, start, (p) + 4), LOAD_MEMBER(name, start, (p) + 5), \
                         LOAD_MEMBER(name, start, (p) + 6), LOAD_MEMBER(name, start, (p) + 7)))
// The sum of a vector's components, in pairs.
#define SUM8(v) ((((v).s0 + (v).s1) + ((v).s2 + (v).s3)) + (((v).s4 + (v).s5) + ((v).s6 + (v).s7)))

// The maximum of a vector's components, NaN winning.
#define MAX8(v)                                                      \
  MAX_NAN(MAX_NAN(MAX_NAN((v).s0, (v).s1), MAX_NAN((v).s2, (v).s3)), \
          MAX_NAN(MAX_NAN((v).s4, (v).s5), MAX_NAN((v).s6, (v).s7)))
#if IS_FLOATING
#define STORE_MEMBERS8(name, start, p, v)                              \
  do {                                                                 \
    const compute8_t stored_ = (v);                                    \
    if (dense_) {                                                      \
      STORE8(name, (start) + (p), stored_);                            \
    } else {                                                           \
      STORE(name, (start) + MEMBER_OFFSET(name, (p)), stored_.s0);     \
      STORE(name, (start) + MEMBER_OFFSET(name, (p) + 1), stored_.s1); \
      STORE(name, (start) + MEMBER_OFFSET(name, (p) + 2), stored_.s2); \
      STORE(name, (start) + MEMBER_OFFSET(name, (p) + 3), stored_.s3); \
      STORE(name, (start) + MEMBER_OFFSET(name, (p) + 4), stored_.s4); \
      STORE(name, (start) + MEMBER_OFFSET(name, (p) + 5), stored_.s5); \
      STORE(name, (start) + MEMBER_OFFSET(name, (p) + 6), stored_.s6); \
      STORE(name, (start) + MEMBER_OFFSET(name, (p) + 7), stored_.s7); \
    }                                                                  \
  } while (0)
#endif

// --- groups lying side by side ----------------------------------------------------------------
// Where the input lays consecutive groups of the innermost kept dimension next to each other
// (stride 1: a sum or softmax over leading dims), a work-item on a CPU device takes a tile of
// adjacent groups (8, or 64 where the rows of groups hold 64 or more) and handles each member of
// all of them at once, as vectors of 8 consecutive elements: one work-item per group would walk
// a column alone around a loop that PoCL cannot vectorise across work-items. The host launches
// one work-item per tile, (kept_size.s0 + width - 1) / width tiles along each row of the
// innermost kept dim, which holds `width` groups or more. Every tile is `width` wide, so that all
// run the same vector code: where a row's groups do not fill its last tile, that tile overlaps
// the one before it and writes only the groups past the first `skip`, which that one writes.

// In a side-by-side kernel whose tiles are `width` groups wide: the coordinates `gc` of the first
// group of the work-item's tile, and how many groups at its start `skip` belongs to the tile
// before. Returns past the end.
#define SIDE_BY_SIDE_TILE(width)                                                             \
  const long tiles_across = (kept_size.s0 - 1 + (width)) / (width);                          \
  const long tile = get_global_id(0);                                                        \
  if (tile >= groups / kept_size.s0 * tiles_across) return;                                  \
  const long row = tile / tiles_across;                                                      \
  const long8 rows_size = (long8)(kept_size.s1234, kept_size.s567, 1);                       \
  const long8 row_c = unravel(row, kept_ndim - 1, rows_size);                                \
  const long own_first = (tile - row * tiles_across) * (width);                              \
  const long8 gc = (long8)(min(own_first, kept_size.s0 - (width)), row_c.s0123, row_c.s456); \
  const long skip = own_first - gc.s0;

// Tiles of side-by-side kernels hold 8 groups, or TILE_OCTETS times as many where the rows of
// groups are that wide: a tile of 8 float32 groups reads half a cache line of each member row
// before jumping to the next member's page, one of 64 reads 256 consecutive bytes.
#define TILE_OCTETS 8

// The functions that run a tile: inlined into each kernel, where their `octets` becomes a
// constant, so that their arrays, indexed in unrolled loops, stay in registers (PoCL leaves a
// plain `inline` function a call).
#define TILE_FUNCTION __attribute__((always_inline)) inline

// The two kernels of a side-by-side op: `name`, whose work-items run `tile` (a TILE_FUNCTION,
// given ARGS and its octets last) over tiles of 8 groups, and `name`_wide over tiles of
// 8 * TILE_OCTETS. PARAMS and ARGS are macros naming the kernels' parameters and the function's
// arguments.
#define SIDE_BY_SIDE_KERNELS(name, PARAMS, tile, ARGS) \
  __kernel void name(PARAMS) {                         \
    SIDE_BY_SIDE_TILE(8)                               \
    tile(ARGS, 1);                                     \
  }                                                    \
  __kernel void name##_wide(PARAMS) {                  \
    SIDE_BY_SIDE_TILE(8 * TILE_OCTETS)                 \
    tile(ARGS, TILE_OCTETS);                           \
  }

// The vector v (a variable), octet k of a tile's elements in one member row from `at` on, stored
// where its groups are the tile's own (from `skip` on).
#define STORE_TILE_OCTET(name, at, k, v)            \
  do {                                              \
    const long before_ = skip - 8 * (k);            \
    const long at_ = (at) + 8 * (k);                \
    if (before_ <= 0) STORE(name, at_, (v).s0);     \
    if (before_ <= 1) STORE(name, at_ + 1, (v).s1); \
    if (before_ <= 2) STORE(name, at_ + 2, (v).s2); \
    if (before_ <= 3) STORE(name, at_ + 3, (v).s3); \
    if (before_ <= 4) STORE(name, at_ + 4, (v).s4); \
    if (before_ <= 5) STORE(name, at_ + 5, (v).s5); \
    if (before_ <= 6) STORE(name, at_ + 6, (v).s6); \
    if (before_ <= 7) STORE(name, at_ + 7, (v).s7); \
  } while (0)

// The sum of v over the lanes of this work-item's slot, returned to every lane. `scratch` holds
// WG_SIZE values.
inline acc_t sum_lanes(const acc_t v, __local acc_t* scratch) {
  __local acc_t* slot = scratch + SLOT * LANES;
  slot[LANE] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (long step = LANES / 2; step > 0; step /= 2) {
    if (LANE < step) slot[LANE] += slot[LANE + step];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const acc_t total = slot[0];
  barrier(CLK_LOCAL_MEM_FENCE);  // before scratch is used again
  return total;
}

// The maximum of v over the slot's lanes, NaN winning.
inline compute_t max_lanes(const compute_t v, __local compute_t* scratch) {
  __local compute_t* slot = scratch + SLOT * LANES;
  slot[LANE] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (long step = LANES / 2; step > 0; step /= 2) {
    if (LANE < step) slot[LANE] = MAX_NAN(slot[LANE], slot[LANE + step]);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const compute_t best = slot[0];
  barrier(CLK_LOCAL_MEM_FENCE);
  return best;
}
