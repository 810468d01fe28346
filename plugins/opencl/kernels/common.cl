// The prelude of every program: how each dtype is stored, loaded and stored back, the types a
// program built for one dtype (-DDTYPE=<bp_dtype code>) computes in, and strided indexing.
// OpenCL C 1.2; nothing here needs an extension except double (-DHAS_FP64).

#ifdef HAS_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

#define CONCAT_(a, b) a##b
#define CONCAT(a, b) CONCAT_(a, b)

// bp_dtype codes, as in abi.h.
#define DT_FLOAT32 0
#define DT_FLOAT64 1
#define DT_FLOAT16 2
#define DT_BFLOAT16 3
#define DT_INT8 4
#define DT_UINT8 5
#define DT_INT32 6
#define DT_INT64 7
#define DT_BOOL 8

// Per dtype: STORAGE_x is the element type in memory; LOAD_x(p, i) reads element i as the type
// arithmetic happens in (float for the 16-bit floats, int 0/1 for bool); STORE_x(p, i, v)
// converts any arithmetic value v as a C++ static_cast to the element type would, which is what
// the CPU backend does: bool is v != 0 (NaN is true), and the 16-bit floats round to nearest
// even through float. Stores are macros so that v keeps its own type until converted.
#define STORAGE_float32 float
#define LOAD_float32(p, i) ((p)[i])
#define STORE_float32(p, i, v) ((p)[i] = (float)(v))

#define STORAGE_float64 double
#define LOAD_float64(p, i) ((p)[i])
#define STORE_float64(p, i, v) ((p)[i] = (double)(v))

// vload_half and vstore_half_rte are core OpenCL C, so Half works without cl_khr_fp16: only
// pointers to half are declared, and arithmetic happens in float.
#define STORAGE_float16 half
#define LOAD_float16(p, i) vload_half((size_t)(i), (p))
#define STORE_float16(p, i, v) vstore_half_rte((float)(v), (size_t)(i), (p))

// bfloat16 is the upper half of a float: widening is exact; narrowing rounds to nearest even
// and keeps NaN a (quiet) NaN, exactly as bp::BFloat16::from_float.
inline ushort float_to_bfloat16(float f) {
  const uint x = as_uint(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (ushort)((x >> 16) | 0x40u);
  return (ushort)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}
#define STORAGE_bfloat16 ushort
#define LOAD_bfloat16(p, i) as_float((uint)((p)[i]) << 16)
#define STORE_bfloat16(p, i, v) ((p)[i] = float_to_bfloat16((float)(v)))

#define STORAGE_int8 char
#define LOAD_int8(p, i) ((p)[i])
#define STORE_int8(p, i, v) ((p)[i] = (char)(v))

#define STORAGE_uint8 uchar
#define LOAD_uint8(p, i) ((p)[i])
#define STORE_uint8(p, i, v) ((p)[i] = (uchar)(v))

#define STORAGE_int32 int
#define LOAD_int32(p, i) ((p)[i])
#define STORE_int32(p, i, v) ((p)[i] = (int)(v))

#define STORAGE_int64 long
#define LOAD_int64(p, i) ((p)[i])
#define STORE_int64(p, i, v) ((p)[i] = (long)(v))

#define STORAGE_bool uchar
#define LOAD_bool(p, i) ((int)((p)[i] != 0))
#define STORE_bool(p, i, v) ((p)[i] = (uchar)((v) != 0))

// --- the program's own dtype ------------------------------------------------------------------
// elem_t: the element type; compute_t: what elementwise arithmetic happens in (as the CPU
// backend's compute_t); acc_t (acc8_t: eight of them): what reductions accumulate in (double
// where the device has it, as the CPU backend does, and long for integers); product_t
// (product16_t: sixteen of them): what matrix products accumulate in (the compute type for
// floats, long for integers, as the CPU backend). LIT(x) is a floating literal of compute_t,
// since a double literal needs cl_khr_fp64.
#ifdef DTYPE
#if DTYPE == DT_FLOAT32
#define DTYPE_NAME float32
typedef float compute_t;
#elif DTYPE == DT_FLOAT64
#define DTYPE_NAME float64
typedef double compute_t;
#elif DTYPE == DT_FLOAT16
#define DTYPE_NAME float16
typedef float compute_t;
#elif DTYPE == DT_BFLOAT16
#define DTYPE_NAME bfloat16
typedef float compute_t;
#elif DTYPE == DT_INT8
#define DTYPE_NAME int8
typedef char compute_t;
#elif DTYPE == DT_UINT8
#define DTYPE_NAME uint8
typedef uchar compute_t;
#elif DTYPE == DT_INT32
#define DTYPE_NAME int32
typedef int compute_t;
#elif DTYPE == DT_INT64
#define DTYPE_NAME int64
typedef long compute_t;
#elif DTYPE == DT_BOOL
#define DTYPE_NAME bool
typedef int compute_t;
#else
#error "DTYPE names no bp_dtype"
#endif

typedef CONCAT(STORAGE_, DTYPE_NAME) elem_t;
#define LOAD(p, i) CONCAT(LOAD_, DTYPE_NAME)(p, i)
#define STORE(p, i, v) CONCAT(STORE_, DTYPE_NAME)(p, i, v)

#define IS_FLOATING (DTYPE <= DT_BFLOAT16)
// compute8_t: eight values of compute_t, for math functions and maxima taken of a vector at once.
#if IS_FLOATING
#if DTYPE == DT_FLOAT64
typedef double8 compute8_t;
#define CONVERT_COMPUTE8 convert_double8
#else
typedef float8 compute8_t;
#define CONVERT_COMPUTE8 convert_float8
#endif
#define IS_NAN(x) isnan(x)
#define ABS(x) fabs(x)
#if DTYPE == DT_FLOAT64
#define LIT(x) x
#else
#define LIT(x) x##f
#endif
// tanh, saturated to +-1 where the exact value rounds to +-1: some drivers (PoCL 3) return
// 1 - 2^-24 there, which would make gelu(-inf) -inf instead of NaN and gelu(-100) nonzero.
#if DTYPE == DT_FLOAT64
#define TANH_SATURATES 19.1
#else
#define TANH_SATURATES 9.1f
#endif
inline compute_t __attribute__((overloadable)) saturating_tanh(const compute_t x) {
  return fabs(x) >= TANH_SATURATES ? copysign((compute_t)1, x) : tanh(x);
}
inline compute8_t __attribute__((overloadable)) saturating_tanh(const compute8_t x) {
  return fabs(x) >= TANH_SATURATES ? copysign((compute8_t)1, x) : tanh(x);
}
#ifdef HAS_FP64
typedef double acc_t;
typedef double8 acc8_t;
#define CONVERT_ACC8 convert_double8
#else
typedef float acc_t;
typedef float8 acc8_t;
#define CONVERT_ACC8 convert_float8
#endif
typedef compute_t product_t;
#if DTYPE == DT_FLOAT64
typedef double16 product16_t;
#else
typedef float16 product16_t;
#endif
#else
#if DTYPE == DT_INT8
typedef char8 compute8_t;
#elif DTYPE == DT_UINT8
typedef uchar8 compute8_t;
#elif DTYPE == DT_INT64
typedef long8 compute8_t;
#else
typedef int8 compute8_t;  // int32, and bool's 0 and 1
#endif
#define IS_NAN(x) 0
#define ABS(x) ((x) < 0 ? -(x) : (x))
typedef long acc_t;
typedef long8 acc8_t;
#define CONVERT_ACC8 convert_long8
typedef long product_t;
typedef long16 product16_t;
#endif

// PyTorch's maximum and minimum: a NaN operand wins.
#define MAX_NAN(a, b) (IS_NAN(a) ? (a) : IS_NAN(b) ? (b) : (a) < (b) ? (b) : (a))
#define MIN_NAN(a, b) (IS_NAN(a) ? (a) : IS_NAN(b) ? (b) : (b) < (a) ? (b) : (a))

// Elements at, ..., at + 7 of p as a compute8_t, and a compute8_t stored to them: one vector
// access with vector conversions for the floating dtypes (so that float16 and bfloat16 convert
// 8 elements at once rather than one by one), element by element for the others.
#if DTYPE == DT_FLOAT32 || DTYPE == DT_FLOAT64
#define LOAD8(p, at) vload8(0, (p) + (at))
#define STORE8(p, at, v) vstore8((v), 0, (p) + (at))
#elif DTYPE == DT_FLOAT16
// vload_half8 and vstore_half8 need only 2-byte alignment, but PoCL may compile them to aligned
// 16-byte moves, which fault where a row starts at an odd element: the bits cross as ushorts,
// and convert through an aligned private copy.
inline float8 load_half8(const __global half* p) {
  const ushort8 bits = vload8(0, (const __global ushort*)p);
  return vload_half8(0, (const __private half*)&bits);
}
inline void store_half8(const float8 v, __global half* p) {
  ushort8 bits;
  vstore_half8_rte(v, 0, (__private half*)&bits);
  vstore8(bits, 0, (__global ushort*)p);
}
#define LOAD8(p, at) load_half8((p) + (at))
#define STORE8(p, at, v) store_half8((v), (p) + (at))
#elif DTYPE == DT_BFLOAT16
// float_to_bfloat16 for 8 values at once.
inline ushort8 float8_to_bfloat16(const float8 f) {
  const uint8 x = as_uint8(f);
  const uint8 rounded = (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
  const uint8 quiet_nan = (x >> 16) | 0x40u;
  return convert_ushort8(select(rounded, quiet_nan, (x & 0x7fffffffu) > 0x7f800000u));
}
#define LOAD8(p, at) as_float8(convert_uint8(vload8(0, (p) + (at))) << 16)
#define STORE8(p, at, v) vstore8(float8_to_bfloat16(v), 0, (p) + (at))
#else
// `at` is expanded once per element: pass a variable, since PoCL does not always fold the
// copies of an expression into one.
#define LOAD8(p, at)                                                                    \
  ((compute8_t)(LOAD(p, (at)), LOAD(p, (at) + 1), LOAD(p, (at) + 2), LOAD(p, (at) + 3), \
                LOAD(p, (at) + 4), LOAD(p, (at) + 5), LOAD(p, (at) + 6), LOAD(p, (at) + 7)))
#define STORE8(p, at, v)        \
  do {                          \
    STORE(p, (at), (v).s0);     \
    STORE(p, (at) + 1, (v).s1); \
    STORE(p, (at) + 2, (v).s2); \
    STORE(p, (at) + 3, (v).s3); \
    STORE(p, (at) + 4, (v).s4); \
    STORE(p, (at) + 5, (v).s5); \
    STORE(p, (at) + 6, (v).s6); \
    STORE(p, (at) + 7, (v).s7); \
  } while (0)
#endif

// Elements at, at + step, ..., at + 15 * step of p as a product16_t (`at` a variable, as in
// the last LOAD8). With step the constant 1, one vector load.
#define LOAD_PRODUCT(p, at, step, q) (product_t) LOAD(p, (at) + (q) * (step))
#define LOAD16(p, at, step)                                                    \
  ((product16_t)(LOAD_PRODUCT(p, at, step, 0), LOAD_PRODUCT(p, at, step, 1),   \
                 LOAD_PRODUCT(p, at, step, 2), LOAD_PRODUCT(p, at, step, 3),   \
                 LOAD_PRODUCT(p, at, step, 4), LOAD_PRODUCT(p, at, step, 5),   \
                 LOAD_PRODUCT(p, at, step, 6), LOAD_PRODUCT(p, at, step, 7),   \
                 LOAD_PRODUCT(p, at, step, 8), LOAD_PRODUCT(p, at, step, 9),   \
                 LOAD_PRODUCT(p, at, step, 10), LOAD_PRODUCT(p, at, step, 11), \
                 LOAD_PRODUCT(p, at, step, 12), LOAD_PRODUCT(p, at, step, 13), \
                 LOAD_PRODUCT(p, at, step, 14), LOAD_PRODUCT(p, at, step, 15)))

// Elements at, at + step, ..., at + 7 * step of p as a compute8_t, and a compute8_t stored to
// them (`at` a variable, as in the last LOAD8).
#define LOAD_STEP(p, at, step, q) (compute_t) LOAD(p, (at) + (q) * (step))
#define LOAD8_STEP(p, at, step)                                                                  \
  ((compute8_t)(LOAD_STEP(p, at, step, 0), LOAD_STEP(p, at, step, 1), LOAD_STEP(p, at, step, 2), \
                LOAD_STEP(p, at, step, 3), LOAD_STEP(p, at, step, 4), LOAD_STEP(p, at, step, 5), \
                LOAD_STEP(p, at, step, 6), LOAD_STEP(p, at, step, 7)))
#define STORE8_STEP(p, at, step, v)      \
  do {                                   \
    STORE(p, (at), (v).s0);              \
    STORE(p, (at) + (step), (v).s1);     \
    STORE(p, (at) + 2 * (step), (v).s2); \
    STORE(p, (at) + 3 * (step), (v).s3); \
    STORE(p, (at) + 4 * (step), (v).s4); \
    STORE(p, (at) + 5 * (step), (v).s5); \
    STORE(p, (at) + 6 * (step), (v).s6); \
    STORE(p, (at) + 7 * (step), (v).s7); \
  } while (0)

// A work-item's block of 8 rows by 32 columns of sums (matmul_rows, conv2d_rows), row i as two
// named product16_t variables: PoCL keeps those in registers, where an array of sums (of
// scalars or of vectors) stays in memory and is loaded and stored around every multiply-add.
// EACH_BLOCK_ROW(M) expands M(0) to M(7); ADD_TO_BLOCK_ROW adds factor times the two vectors
// (low, high) to row i; STORE_BLOCK_ROW writes row i to the array `sum`.
#define EACH_BLOCK_ROW(M) M(0) M(1) M(2) M(3) M(4) M(5) M(6) M(7)
#define DECLARE_BLOCK_ROW(i) product16_t sum##i##_low = 0, sum##i##_high = 0;
#define ADD_TO_BLOCK_ROW(i, factor, low, high) \
  sum##i##_low += (factor) * (low);            \
  sum##i##_high += (factor) * (high);
#define STORE_BLOCK_ROW(i)           \
  vstore16(sum##i##_low, 0, sum[i]); \
  vstore16(sum##i##_high, 1, sum[i]);
#endif  // DTYPE

// --- strided indexing -------------------------------------------------------------------------
// The host drops size-1 dimensions and merges those every operand lays out as one, then passes
// the rest (at most 8) as long8 vectors with the innermost dimension in component 0. An operand
// is a pointer, the element offset of its first element (`base`) and its strides.

// The coordinates of row-major index i over the `ndim` innermost components of `size`.
inline long8 unravel(long i, const int ndim, const long8 size) {
  long8 c = (long8)(0);
  if (ndim <= 1) {  // one dimension: no division
    c.s0 = i;
    return c;
  }
#define UNRAVEL_DIM(k)            \
  if (ndim > k) {                 \
    const long q = i / size.s##k; \
    c.s##k = i - q * size.s##k;   \
    i = q;                        \
  }
  UNRAVEL_DIM(0)
  UNRAVEL_DIM(1)
  UNRAVEL_DIM(2)
  UNRAVEL_DIM(3)
  UNRAVEL_DIM(4)
  UNRAVEL_DIM(5)
  UNRAVEL_DIM(6)
  UNRAVEL_DIM(7)
#undef UNRAVEL_DIM
  return c;
}

inline long dot8(const long8 a, const long8 b) {
  const long8 p = a * b;
  const long4 q = p.lo + p.hi;
  const long2 r = q.lo + q.hi;
  return r.lo + r.hi;
}

// --- elementwise kernels ----------------------------------------------------------------------
// Each elementwise kernel comes in two forms made from one body:
//   name(..., operands...)            takes each operand as pointer, base and strides over the
//                                      shape (STRIDED); built in one of two shapes:
//     name(n, ndim, size, ...)         one work-item per element, which finds element i's
//                                      coordinates: what GPUs want;
//     name(tiles, span, tile_rows, tile_columns, ndim, size, ...)   with -DWALK_IN_TILES
//                                      one work-item per `span` consecutive tiles of the
//                                      innermost two dimensions (row-major over the tiles of
//                                      each index of the outer ones), which finds coordinates
//                                      once per tile and steps through the tile by each
//                                      operand's strides: what CPU devices want, since drivers
//                                      (PoCL) vectorise the loop along a tile's row where those
//                                      strides are 1, with no division per element, and narrow
//                                      tiles keep the cache lines of an operand that steps
//                                      through memory along rows (a transposed copy) in use for
//                                      the tile's next rows;
//   name_dense(operands...)           takes operands that are all dense (stride 1 over one
//                                      dimension) as pointer and base (DENSE), and runs on
//                                      exactly as many work-items as elements, a multiple of the
//                                      work-group size: no index arithmetic and no bounds check,
//                                      which keeps drivers that vectorise across work-items
//                                      (PoCL) vectorising.
// The host picks, and runs the last partial work-group of a dense walk in the strided form.
// PARAMS(P, arg) lists the parameters, tensors through P(type, name); BODY(AT, arg) is the
// statement for element i, with AT(name) an operand's element offset; `arg` is passed through
// to both (an expression, or the types of a copy).
#define STRIDED(type, name) type *name, const long name##_base, const long8 name##_stride
#define DENSE(type, name) type *name, const long name##_base
#define STRIDED_AT(name) (name##_base + dot8(c, name##_stride))
#define TILE_AT(name) (STRIDED_AT(name) + r * name##_stride.s1 + j * name##_stride.s0)
#define DENSE_AT(name) (name##_base + i)

#ifdef WALK_IN_TILES
// ROW(BODY, arg) walks row r of a tile, columns [0, width): EACH_ELEMENT_OF_ROW one by one, or a
// kernel's own walk (MATH_KERNEL's, 8 columns at a time).
#define STRIDED_TILES_KERNEL(name, PARAMS, ROW, BODY, arg)                              \
  __kernel void name(const long tiles, const long span, const long tile_rows,           \
                     const long tile_columns, const int ndim, const long8 size,         \
                     PARAMS(STRIDED, arg)) {                                            \
    const long tiles_across = (size.s0 + tile_columns - 1) / tile_columns;              \
    const long tiles_down = (size.s1 + tile_rows - 1) / tile_rows;                      \
    const long8 plane_size = (long8)(size.s2345, size.s67, 1, 1);                       \
    const long last = min((long)(get_global_id(0) + 1) * span, tiles);                  \
    for (long tile = get_global_id(0) * span; tile < last; ++tile) {                    \
      const long band = tile / tiles_across;                                            \
      const long plane = band / tiles_down;                                             \
      const long8 p = unravel(plane, ndim - 2, plane_size);                             \
      const long8 c = (long8)((tile - band * tiles_across) * tile_columns,              \
                              (band - plane * tiles_down) * tile_rows, p.s0123, p.s45); \
      const long height = min(tile_rows, size.s1 - c.s1);                               \
      const long width = min(tile_columns, size.s0 - c.s0);                             \
      for (long r = 0; r < height; ++r) {                                               \
        ROW(BODY, arg)                                                                  \
      }                                                                                 \
    }                                                                                   \
  }
#define EACH_ELEMENT_OF_ROW(BODY, arg)                                \
  for (long j = 0; j < width; ++j) {                                  \
    const long i = (plane * size.s1 + c.s1 + r) * size.s0 + c.s0 + j; \
    BODY(TILE_AT, arg)                                                \
  }
#define STRIDED_KERNEL(name, PARAMS, BODY, arg) \
  STRIDED_TILES_KERNEL(name, PARAMS, EACH_ELEMENT_OF_ROW, BODY, arg)
#else
#define STRIDED_KERNEL(name, PARAMS, BODY, arg)                                              \
  __kernel void name(const long n, const int ndim, const long8 size, PARAMS(STRIDED, arg)) { \
    const long i = get_global_id(0);                                                         \
    if (i >= n) return;                                                                      \
    const long8 c = unravel(i, ndim, size);                                                  \
    BODY(STRIDED_AT, arg)                                                                    \
  }
#endif

#define DENSE_KERNEL(name, PARAMS, BODY, arg)      \
  __kernel void name##_dense(PARAMS(DENSE, arg)) { \
    const long i = get_global_id(0);               \
    BODY(DENSE_AT, arg)                            \
  }
#define ELEMENTWISE_KERNEL(name, PARAMS, BODY, arg) \
  STRIDED_KERNEL(name, PARAMS, BODY, arg)           \
  DENSE_KERNEL(name, PARAMS, BODY, arg)
