// Elementwise kernels for one dtype (-DDTYPE): arithmetic, functions of one tensor,
// comparisons, where, batch norm, fill and arange, each in the two forms of ELEMENTWISE_KERNEL.
// Inputs arrive broadcast to out's shape and converted to the program's dtype (the core's meta
// step), so every operand is walked over one shape. Float-only functions exist only in floating
// programs; the host refuses them elsewhere. A kernel whose op shares its name with a built-in
// function (abs, exp, ...) ends in "_".

// out = expr(x, y) with x, y the inputs' elements and alpha a scalar (unused by most).
#define BINARY_PARAMS(P, expr)                                                       \
  P(__global elem_t, out), P(__global const elem_t, a), P(__global const elem_t, b), \
      const compute_t alpha
#define BINARY_BODY(AT, expr)         \
  const compute_t x = LOAD(a, AT(a)); \
  const compute_t y = LOAD(b, AT(b)); \
  STORE(out, AT(out), expr);
#define BINARY_KERNEL(name, expr) ELEMENTWISE_KERNEL(name, BINARY_PARAMS, BINARY_BODY, expr)

BINARY_KERNEL(add, x + alpha * y)
BINARY_KERNEL(sub, x - alpha * y)
BINARY_KERNEL(mul, (x * y))
BINARY_KERNEL(maximum, MAX_NAN(x, y))
BINARY_KERNEL(minimum, MIN_NAN(x, y))
#if IS_FLOATING
BINARY_KERNEL(div, x / y)
#endif

// out = expr(x).
#define UNARY_PARAMS(P, expr) P(__global elem_t, out), P(__global const elem_t, a)
#define UNARY_BODY(AT, expr)          \
  const compute_t x = LOAD(a, AT(a)); \
  STORE(out, AT(out), expr);
#define UNARY_KERNEL(name, expr) ELEMENTWISE_KERNEL(name, UNARY_PARAMS, UNARY_BODY, expr)

UNARY_KERNEL(neg, -x)
UNARY_KERNEL(abs_, ABS(x))
// "x < 0 ? 0 : x" lets NaN through, as PyTorch's relu does.
UNARY_KERNEL(relu, x < (compute_t)0 ? (compute_t)0 : x)
#if IS_FLOATING
// Math functions of one tensor, whose expressions hold for a compute8_t vector x as for a
// scalar (the built-in functions, and saturating_tanh, have vector versions). In programs for
// CPU devices each also comes as name_dense8, the dense form taking 8 consecutive elements per
// work-item as one vector: PoCL runs a math function of a vector as vector instructions, but
// calls its scalar version once per element across work-items. Their strided form, in tiles,
// likewise takes 8 columns of a tile's row at a time, each operand's 8 elements as one vector
// access where its columns are consecutive (out's always are: the core passes it dense).
#ifdef WALK_IN_TILES
#define UNARY_OCTETS_OF_ROW(BODY, expr)                                                        \
  long j = 0;                                                                                  \
  for (; j + 8 <= width; j += 8) {                                                             \
    const long a_at = TILE_AT(a), out_at = TILE_AT(out);                                       \
    const compute8_t x = a_stride.s0 == 1 ? LOAD8(a, a_at) : LOAD8_STEP(a, a_at, a_stride.s0); \
    const compute8_t y = expr;                                                                 \
    if (out_stride.s0 == 1) {                                                                  \
      STORE8(out, out_at, y);                                                                  \
    } else {                                                                                   \
      STORE8_STEP(out, out_at, out_stride.s0, y);                                              \
    }                                                                                          \
  }                                                                                            \
  for (; j < width; ++j) {                                                                     \
    BODY(TILE_AT, expr)                                                                        \
  }
#define MATH_KERNEL(name, expr)                                                               \
  STRIDED_TILES_KERNEL(name, UNARY_PARAMS, UNARY_OCTETS_OF_ROW, UNARY_BODY, expr)             \
  DENSE_KERNEL(name, UNARY_PARAMS, UNARY_BODY, expr)                                          \
  __kernel void name##_dense8(DENSE(__global elem_t, out), DENSE(__global const elem_t, a)) { \
    const long from = a_base + get_global_id(0) * 8, to = out_base + get_global_id(0) * 8;    \
    const compute8_t x = LOAD8(a, from);                                                      \
    const compute8_t y = expr;                                                                \
    STORE8(out, to, y);                                                                       \
  }
#else
#define MATH_KERNEL(name, expr) UNARY_KERNEL(name, expr)
#endif

MATH_KERNEL(exp_, exp(x))
MATH_KERNEL(log_, log(x))
MATH_KERNEL(sqrt_, sqrt(x))
MATH_KERNEL(tanh_, saturating_tanh(x))
MATH_KERNEL(sigmoid, LIT(1.0) / (LIT(1.0) + exp(-x)))
MATH_KERNEL(silu, x / (LIT(1.0) + exp(-x)))
// GELU exactly (x * Phi(x)), as x/2 erfc(-x / sqrt 2), which does not cancel for negative x as
// 1 + erf(x / sqrt 2) does; and PyTorch's approximate='tanh'.
MATH_KERNEL(gelu_erf, LIT(0.5) * x * erfc(-x * LIT(0.70710678118654752440)))
MATH_KERNEL(gelu_tanh, LIT(0.5) * x *
                           (LIT(1.0) + saturating_tanh(LIT(0.79788456080286535588) *
                                                       (x + LIT(0.044715) * x * x * x))))

// Batch norm with running statistics, per channel: the host gives mean, var, weight and bias
// stride 0 in every dim but the channel's. An absent weight or bias is not read.
#define BATCH_NORM_PARAMS(P, unused)                                                    \
  P(__global elem_t, out), P(__global const elem_t, a), P(__global const elem_t, mean), \
      P(__global const elem_t, var), P(__global const elem_t, weight),                  \
      P(__global const elem_t, bias), const compute_t eps, const int has_weight,        \
      const int has_bias
#define BATCH_NORM_BODY(AT, unused)                                                        \
  const compute_t scale =                                                                  \
      (has_weight ? LOAD(weight, AT(weight)) : LIT(1.0)) / sqrt(LOAD(var, AT(var)) + eps); \
  const compute_t shift = has_bias ? LOAD(bias, AT(bias)) : LIT(0.0);                      \
  STORE(out, AT(out), (LOAD(a, AT(a)) - LOAD(mean, AT(mean))) * scale + shift);
ELEMENTWISE_KERNEL(batch_norm, BATCH_NORM_PARAMS, BATCH_NORM_BODY, )
#endif

// Bool out = x op y; NaN compares false.
#define COMPARE_PARAMS(P, op) \
  P(__global uchar, out), P(__global const elem_t, a), P(__global const elem_t, b)
#define COMPARE_BODY(AT, op)          \
  const compute_t x = LOAD(a, AT(a)); \
  const compute_t y = LOAD(b, AT(b)); \
  STORE_bool(out, AT(out), x op y);
#define COMPARE_KERNEL(name, op) ELEMENTWISE_KERNEL(name, COMPARE_PARAMS, COMPARE_BODY, op)

COMPARE_KERNEL(eq, ==)
COMPARE_KERNEL(lt, <)
COMPARE_KERNEL(gt, >)

#define WHERE_PARAMS(P, unused)                                                             \
  P(__global elem_t, out), P(__global const uchar, condition), P(__global const elem_t, a), \
      P(__global const elem_t, b)
#define WHERE_BODY(AT, unused)                                                                    \
  const compute_t picked = LOAD_bool(condition, AT(condition)) ? LOAD(a, AT(a)) : LOAD(b, AT(b)); \
  STORE(out, AT(out), picked);
ELEMENTWISE_KERNEL(where_, WHERE_PARAMS, WHERE_BODY, )

#define FILL_PARAMS(P, unused) P(__global elem_t, out), const compute_t value
#define FILL_BODY(AT, unused) STORE(out, AT(out), value);
ELEMENTWISE_KERNEL(fill, FILL_PARAMS, FILL_BODY, )

// out's i-th element in row-major order is start + i * step, computed from i rather than by
// repeated addition so that rounding does not accumulate (in double for floating dtypes where
// the device has it, and in long for integers, as the CPU backend). The product is rounded on its
// own, as on the CPU backend: OpenCL C contracts a product and the sum that follows into one fma
// by default, whose single rounding differs in the last bit for about a quarter of
// arange(0.1, ..., 0.3)'s values.
#pragma OPENCL FP_CONTRACT OFF
inline acc_t arange_value(const acc_t start, const long i, const acc_t step) {
  return start + (acc_t)i * step;
}
#pragma OPENCL FP_CONTRACT ON
#define ARANGE_PARAMS(P, unused) P(__global elem_t, out), const acc_t start, const acc_t step
#define ARANGE_BODY(AT, unused) STORE(out, AT(out), arange_value(start, i, step));
ELEMENTWISE_KERNEL(arange, ARANGE_PARAMS, ARANGE_BODY, )
