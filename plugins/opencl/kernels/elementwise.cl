// Elementwise kernels for one dtype (-DDTYPE): arithmetic, functions of one tensor and their
// gradients, comparisons, where, batch norm, optimizer steps, indexed sums (index_add), fill and
// arange, each in the two forms of ELEMENTWISE_KERNEL.
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

// The gradients of relu and gelu: grad_output (x) times the derivative at self (y).
// threshold_backward takes its threshold as alpha and lets a NaN self pass the gradient, as
// PyTorch's does. gelu's exact derivative is Phi(y) + y phi(y), Phi through erfc as in gelu_erf.
// The tanh approximation's, with t = tanh(u) and u = k (y + c y^3), is (1 + t) / 2 +
// y (1 - t^2) k (1 + 3 c y^2) / 2, computed as s + 2 y s s' k (1 + 3 c y^2) with s =
// sigmoid(2u) = (1 + t) / 2 and s' = sigmoid(-2u) = (1 - t) / 2: 1 + t cancels where t nears -1,
// and OpenCL's tanh may be several ulp off there.
inline compute_t gelu_erf_derivative(const compute_t y) {
  return LIT(0.5) * erfc(-y * LIT(0.70710678118654752440)) +
         y * LIT(0.39894228040143267794) * exp(LIT(-0.5) * y * y);
}
inline compute_t gelu_tanh_derivative(const compute_t y) {
  const compute_t k = LIT(0.79788456080286535588), c = LIT(0.044715);
  const compute_t square = y * y;
  const compute_t twice_u = LIT(2.0) * k * (y + c * square * y);
  const compute_t s = LIT(1.0) / (LIT(1.0) + exp(-twice_u));
  const compute_t s_opposite = LIT(1.0) / (LIT(1.0) + exp(twice_u));
  // Far from 0, s s' underflows to 0 while 1 + 3 c y^2 may overflow: the term is 0 there.
  const compute_t spread = s * s_opposite;
  return s + (spread == LIT(0.0) ? LIT(0.0)
                                 : LIT(2.0) * y * spread * k * (LIT(1.0) + LIT(3.0) * c * square));
}
BINARY_KERNEL(threshold_backward, y <= alpha ? (compute_t)0 : x)
BINARY_KERNEL(gelu_erf_backward, x* gelu_erf_derivative(y))
BINARY_KERNEL(gelu_tanh_backward, x* gelu_tanh_derivative(y))

// One SGD step of torch.optim.SGD: d = grad + weight_decay * param; with momentum, the buffer
// becomes d on the first step, else momentum * buffer + (1 - dampening) * d, and d becomes
// d + momentum * buffer (nesterov) or the buffer; param -= lr * d. Without momentum the buffer is
// not read and receives d. The outputs may be the inputs: each element is read before written.
#define SGD_STEP_PARAMS(P, unused)                                                                \
  P(__global elem_t, param_out), P(__global elem_t, buffer_out), P(__global const elem_t, param), \
      P(__global const elem_t, grad), P(__global const elem_t, buffer), const compute_t lr,       \
      const compute_t momentum, const compute_t dampening, const compute_t weight_decay,          \
      const int nesterov, const int first_step
#define SGD_STEP_BODY(AT, unused)                                         \
  const compute_t p = LOAD(param, AT(param));                             \
  compute_t d = LOAD(grad, AT(grad));                                     \
  if (weight_decay != 0) d += weight_decay * p;                           \
  compute_t b = d;                                                        \
  if (momentum != 0 && !first_step) {                                     \
    b = momentum * LOAD(buffer, AT(buffer)) + (LIT(1.0) - dampening) * d; \
  }                                                                       \
  if (momentum != 0) d = nesterov ? d + momentum * b : b;                 \
  STORE(param_out, AT(param_out), p - lr * d);                            \
  STORE(buffer_out, AT(buffer_out), b);
ELEMENTWISE_KERNEL(sgd_step, SGD_STEP_PARAMS, SGD_STEP_BODY, )

// One AdamW step of torch.optim.AdamW (no amsgrad), with the host's per-step constants:
// decay = 1 - lr * weight_decay, step_size = lr / (1 - beta1^step) and correction2_root =
// sqrt(1 - beta2^step). exp_avg += (1 - beta1) (grad - exp_avg); exp_avg_sq = beta2 exp_avg_sq
// + (1 - beta2) grad^2; param = param * decay - step_size exp_avg / (sqrt(exp_avg_sq) /
// correction2_root + eps). The outputs may be the inputs, as in sgd_step.
#define ADAMW_STEP_PARAMS(P, unused)                                                      \
  P(__global elem_t, param_out), P(__global elem_t, exp_avg_out),                         \
      P(__global elem_t, exp_avg_sq_out), P(__global const elem_t, param),                \
      P(__global const elem_t, grad), P(__global const elem_t, exp_avg),                  \
      P(__global const elem_t, exp_avg_sq), const compute_t decay, const compute_t beta1, \
      const compute_t beta2, const compute_t step_size, const compute_t correction2_root, \
      const compute_t eps
#define ADAMW_STEP_BODY(AT, unused)                                        \
  const compute_t g = LOAD(grad, AT(grad));                                \
  const compute_t m = LOAD(exp_avg, AT(exp_avg));                          \
  const compute_t v = LOAD(exp_avg_sq, AT(exp_avg_sq));                    \
  const compute_t new_m = m + (LIT(1.0) - beta1) * (g - m);                \
  const compute_t new_v = beta2 * v + (LIT(1.0) - beta2) * g * g;          \
  const compute_t denominator = sqrt(new_v) / correction2_root + eps;      \
  STORE(param_out, AT(param_out),                                          \
        LOAD(param, AT(param)) * decay - step_size * new_m / denominator); \
  STORE(exp_avg_out, AT(exp_avg_out), new_m);                              \
  STORE(exp_avg_sq_out, AT(exp_avg_sq_out), new_v);
ELEMENTWISE_KERNEL(adamw_step, ADAMW_STEP_PARAMS, ADAMW_STEP_BODY, )

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

// index_add and embedding's gradient as a gather over out, without atomics: out's element in row
// r (its index along the indexed dim) is base's (0 without one) plus factor(r) times source's
// elements at the index's positions naming r, added in the index's order. The host sorts the
// positions by the row they name: row r's are positions[starts[r]] to positions[starts[r + 1]]
// (exclusive). `starts` is an operand whose offset at an element is the element's row (stride 1
// along the dim, 0 elsewhere); `source` is at position 0, and a position is `step` elements
// further. factor(r) is alpha, but 0 at padding_row, and divided by the row's count with
// scale_by_count.
#define INDEXED_ADD_PARAMS(P, unused)                                                        \
  P(__global elem_t, out), P(__global const elem_t, base), P(__global const elem_t, source), \
      P(__global const long, starts), __global const long *positions, const long step,       \
      const compute_t alpha, const int has_base, const long padding_row, const int scale_by_count
#define INDEXED_ADD_BODY(AT, unused)                                                            \
  const long row = AT(starts);                                                                  \
  const long first = starts[row], last = starts[row + 1];                                       \
  compute_t factor = row == padding_row ? (compute_t)0 : alpha;                                 \
  if (scale_by_count && last > first) factor /= (compute_t)(last - first);                      \
  compute_t sum = has_base ? LOAD(base, AT(base)) : (compute_t)0;                               \
  const long from = AT(source);                                                                 \
  for (long k = first; k < last; ++k) sum += factor * LOAD(source, from + positions[k] * step); \
  STORE(out, AT(out), sum);
ELEMENTWISE_KERNEL(indexed_add, INDEXED_ADD_PARAMS, INDEXED_ADD_BODY, )

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
