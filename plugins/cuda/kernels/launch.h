// The kernels' entry points, as the host code calls them: plain C++ functions defined in the
// .cu files next to their kernels, each choosing the kernel instance for a dtype and launching
// it on the given stream. A dtype an op does not take is refused with BP_STATUS_UNIMPLEMENTED
// ("sub: not implemented for 'Bool'", as the CPU backend says). Launch failures throw
// bp::plugin::Error with the CUDA error.
#pragma once

#include "geometry.h"

#include <backplane/sdk/dtype.hpp>
#include <backplane/sdk/scalar.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace bp::cuda {

// Where and how wide a launch may be.
struct LaunchTarget {
  cudaStream_t stream = nullptr;
  int multiprocessors = 1;
  // Dynamic shared memory a block may use once a kernel opts in (cudaFuncSetAttribute).
  size_t max_shared_memory = 48 * 1024;
};

// N operands of one shape, operand 0 written. `data` points at each operand's first element.
// Where every operand is dense (consecutive elements), kernels skip the index arithmetic and
// use 16-byte loads when the pointers allow.
template <int N>
struct ElementwiseLaunch {
  LaunchTarget target;
  int64_t numel = 0;
  bool dense = false;
  void* data[N] = {};
  StridedShape<N> shape;  // when !dense
};

// --- elementwise (binary.cu, unary.cu, compare.cu, copy.cu) -----------------------------------

enum class BinaryOp { Add, Mul, Div, Maximum, Minimum };
// out = self op other; Add computes self + alpha * other (subtraction is Add with -alpha).
// Operands: out, self, other, all of `dtype`.
void launch_binary(BinaryOp op, DType dtype, const ElementwiseLaunch<3>& launch, const Scalar& alpha);

enum class UnaryOp { Neg, Abs, Exp, Log, Sqrt, Tanh, Sigmoid, Relu, GeluErf, GeluTanh };
// Operands: out, self, both of `dtype`.
void launch_unary(UnaryOp op, DType dtype, const ElementwiseLaunch<2>& launch);

enum class CompareOp { Eq, Lt, Gt };
// Operands: out (Bool), self and other of `dtype`.
void launch_compare(CompareOp op, DType dtype, const ElementwiseLaunch<3>& launch);

// Operands: out, condition (Bool), self, other; elements of `element_size` bytes move unchanged.
void launch_where(size_t element_size, const ElementwiseLaunch<4>& launch);

// Operands: dst, src, both of one dtype of `element_size` bytes; bits move unchanged.
void launch_copy_bits(size_t element_size, const ElementwiseLaunch<2>& launch);
// Operands: dst of `to`, src of `from`; each value converted as a C++ static_cast would (the
// 16-bit floats through float), as the CPU backend converts.
void launch_convert(DType to, DType from, const ElementwiseLaunch<2>& launch);
// Operand: the tensor; every element becomes `bits` (the value's bytes in the tensor's dtype).
void launch_fill_bits(size_t element_size, uint64_t bits, const ElementwiseLaunch<1>& launch);

// out[i * stride] = start + i * step for i in [0, count): in double for floating dtypes and
// int64 for integers, then converted to `dtype`, as the CPU backend computes.
void launch_arange(DType dtype, void* out, int64_t count, int64_t stride, const Scalar& start,
                   const Scalar& step, const LaunchTarget& target);

// --- groups (reduce.cu, softmax.cu, layer_norm.cu) ---------------------------------------------

// Device memory a group kernel borrows for one launch, from the device's caching allocator.
class GroupScratch {
 public:
  virtual ~GroupScratch() = default;
  // `bytes` of device memory for partial results. It goes back to the cache when the launch
  // returns; work queued on the launch's stream still sees it intact, since the allocator hands
  // blocks out again only to work queued after it on that stream.
  virtual void* allocate(size_t bytes) = 0;
  // `count` zeroed uint32 counters, which every kernel using them leaves zeroed again.
  virtual uint32_t* zeroed_counters(int64_t count) = 0;
};

// out = the sum (or the mean, when `average`) of each group's members. Operands: input, out,
// both of `dtype`.
void launch_sum(DType dtype, const GroupShape<2>& shape, const void* input, void* out, bool average,
                const LaunchTarget& target, GroupScratch& scratch);

// The largest member of each group (NaN above everything) and the position of its first
// occurrence. Operands: input, values (of `dtype`, may be null), indices (Int64, may be null).
void launch_max(DType dtype, const GroupShape<3>& shape, const void* input, void* values,
                int64_t* indices, const LaunchTarget& target, GroupScratch& scratch);

// softmax, or log_softmax when `logarithm`, of each group. Operands: input, out, both of
// `dtype`.
void launch_softmax(DType dtype, const GroupShape<2>& shape, const void* input, void* out,
                    bool logarithm, const LaunchTarget& target);

// Layer norm of each group: out = (x - mean) * rstd * weight + bias, with mean and
// rstd = 1 / sqrt(biased variance + eps) written per group. Operands: input, out, mean, rstd,
// weight, bias (weight and bias may be null), all of `dtype`.
enum LayerNormOperand { kNormInput, kNormOut, kNormMean, kNormRstd, kNormWeight, kNormBias, kNormOperands };
void launch_layer_norm(DType dtype, const GroupShape<kNormOperands>& shape, const void* const* data,
                       double eps, const LaunchTarget& target);

// --- matrix products of integer dtypes (matmul_int.cu) -----------------------------------------

// One operand of a batched product: element (batch, row, col) at
// data + batch * strides[0] + row * strides[1] + col * strides[2] (in elements).
struct MatrixOperand {
  const void* data = nullptr;
  int64_t strides[3] = {};
};

// out = alpha * (a @ b) + beta * addend over `batches` (n x k) @ (k x m) products, accumulated
// in int64 and wrapped to `dtype` (Char, Byte, Int, Long). Without an addend (null data), beta
// is ignored.
void launch_integer_matmul(DType dtype, int64_t batches, int64_t n, int64_t k, int64_t m,
                           const MatrixOperand& a, const MatrixOperand& b, const MatrixOperand& addend,
                           void* out, const int64_t (&out_strides)[3], const Scalar& alpha,
                           const Scalar& beta, const LaunchTarget& target);

}  // namespace bp::cuda
