// The kernels' entry points, as the host code calls them: plain C++ functions defined in the
// .cu files next to their kernels, each choosing the kernel instance for a dtype and launching
// it on the given stream. Each op's kernels are instantiated for the dtypes the op declares in
// ops.yaml (bp::plugin::kernel_dtypes), less those the plugin does not take, and any other
// dtype is refused by bp::plugin::visit_dtype with BP_STATUS_UNIMPLEMENTED and the message
// every backend gives. A launch shared by several ops takes the op's kernel_dtypes type as its
// template argument. Launch failures throw bp::plugin::Error with the CUDA error.
#pragma once

#include "kernels/geometry.h"

#include <backplane/sdk/dtype.hpp>
#include <backplane/sdk/kernel_dtypes.h>
#include <backplane/sdk/scalar.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <optional>

namespace bp::cuda {

namespace kernel_dtypes = plugin::kernel_dtypes;

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

enum class BinaryOp { Add, Sub, Mul, Div, Maximum, Minimum };
// out = self op other. Add and Sub both compute self + alpha * other, on the dtypes add and sub
// take: for Sub the caller passes sub's alpha negated. Operands: out, self, other, all of
// `dtype`.
void launch_binary(BinaryOp op, DType dtype, const ElementwiseLaunch<3>& launch,
                   const Scalar& alpha);

enum class UnaryOp { Neg, Abs, Exp, Log, Sqrt, Tanh, Sigmoid, Relu, GeluErf, GeluTanh, Silu };
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

// --- groups (reduce.cu, softmax.cu, norm.cu) ---------------------------------------------------

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
// occurrence, for Kernel: kernel_dtypes::amax_out, max_dim_max or argmax_out. Operands: input,
// values (of `dtype`, may be null), indices (Int64, may be null).
template <typename Kernel>
void launch_max(DType dtype, const GroupShape<3>& shape, const void* input, void* values,
                int64_t* indices, const LaunchTarget& target, GroupScratch& scratch);

// softmax, or log_softmax when `logarithm`, of each group. Operands: input, out, both of
// `dtype`.
void launch_softmax(DType dtype, const GroupShape<2>& shape, const void* input, void* out,
                    bool logarithm, const LaunchTarget& target);

// Layer norm of each group: out = (x - mean) * rstd * weight + bias, with mean and
// rstd = 1 / sqrt(biased variance + eps) written per group. Operands: input, out, mean, rstd,
// weight, bias (weight and bias may be null), all of `dtype`.
enum LayerNormOperand {
  kNormInput,
  kNormOut,
  kNormMean,
  kNormRstd,
  kNormWeight,
  kNormBias,
  kNormOperands
};
void launch_layer_norm(DType dtype, const GroupShape<kNormOperands>& shape, const void* const* data,
                       double eps, const LaunchTarget& target);

// RMS norm of each group: out = x / sqrt(mean(x^2) + eps) * weight. Operands: input, out,
// weight (may be null), all of `dtype`. Without eps, the machine epsilon of the type the kernel
// computes in (float for the 16-bit floats).
void launch_rms_norm(DType dtype, const GroupShape<3>& shape, const void* input, void* out,
                     const void* weight, std::optional<double> eps, const LaunchTarget& target);

// Batch norm with running statistics: out = (x - mean) * weight / sqrt(var + eps) + bias per
// channel. Operands: out, input, mean, var, weight, bias, all of `dtype`, the per-channel ones
// broadcast over the input's shape; an absent weight or bias is not read (`has_weight`,
// `has_bias`).
void launch_batch_norm(DType dtype, const ElementwiseLaunch<6>& launch, double eps, bool has_weight,
                       bool has_bias);

// --- attention (attention.cu) -------------------------------------------------------------------

// The operands of fused attention, in the order of their strides and addresses.
enum AttentionOperand {
  kAttentionQuery,
  kAttentionKey,
  kAttentionValue,
  kAttentionOut,
  kAttentionOperands
};

// The kernel copies rows in pieces of this many bytes: every operand's last dim must be
// contiguous and each of its rows must start at a multiple of it.
inline constexpr size_t kAttentionRowAlignment = 16;

// `batches` independent problems (one per index of the leading dims: batch, heads, ...), each a
// query (L x E), key (S x E), value (S x E) and out (L x E) matrix of one operand.
struct AttentionShape {
  int64_t batches = 0;
  StridedShape<kAttentionOperands> batch_offsets;  // each problem's first element, per operand
  int64_t query_length = 0;                        // L
  int64_t key_length = 0;                          // S
  int64_t head_dim = 0;                            // E
  int64_t row_strides[kAttentionOperands] =
      {};               // in elements; rows as kAttentionRowAlignment requires
  bool causal = false;  // query i attends to keys 0..i
};

// out = softmax(query @ key^T * scale) @ value per problem, accumulated in float; zeros where
// S is 0. Fused for Float16 and BFloat16 with E of 64 or 128 only; other dtypes and head sizes,
// and a device with too little shared memory, are refused with BP_STATUS_UNIMPLEMENTED.
void launch_fused_attention(DType dtype, const AttentionShape& shape, const void* const* data,
                            double scale, const LaunchTarget& target);

// --- indexing (gather.cu) -----------------------------------------------------------------------

// out = src picked along one dimension by Int64 indices: for each element of out, the operands'
// offsets (out; src with the picked dimension left out; the index) and then
// src[offset + index * index_stride]. Indices outside [0, limit) are not read from; the one at
// out's first such position is returned (std::nullopt when all were in range), which waits for
// the launch.
std::optional<int64_t> launch_gather(size_t element_size, const ElementwiseLaunch<3>& launch,
                                     int64_t index_stride, int64_t limit, GroupScratch& scratch);

// --- convolution and pooling (pool.cu, conv.cu) --------------------------------------------------

// An (N, C, H, W) tensor: its first element and its four strides (in elements).
struct Image {
  void* data = nullptr;
  int64_t sizes[4] = {};
  int64_t strides[4] = {};
};

enum class PoolKind { Max, Average, AdaptiveAverage };

// One sliding window per output element, as plugin::Window2d describes it (ignored by adaptive
// pooling, whose windows follow from the sizes).
struct SlidingWindow {
  int64_t kernel[2] = {1, 1};
  int64_t stride[2] = {1, 1};
  int64_t padding[2] = {0, 0};
  int64_t dilation[2] = {1, 1};
  bool count_include_pad = true;
  int64_t divisor_override = 0;  // 0: none
};

// out = the maximum (NaN above everything) or the mean of each window of input.
void launch_pool2d(DType dtype, PoolKind kind, const Image& input, const Image& out,
                   const SlidingWindow& window, const LaunchTarget& target);

// conv2d as an implicit GEMM (conv.cuh): out[n, o, y, x] = bias[o] + the sum over the window
// and the group's input channels of input * weight, accumulated in float (double for Double),
// tap after tap in order. weight is (C_out, C_in / groups, kH, kW) with any strides; bias, if
// any, has `bias_stride`.
void launch_conv2d(DType dtype, const Image& input, const Image& weight, const void* bias,
                   int64_t bias_stride, const Image& out, const SlidingWindow& window,
                   int64_t groups, const LaunchTarget& target);

// --- matrix products of integer dtypes (matmul_int.cu) -----------------------------------------

// One operand of a batched product: element (batch, row, col) at
// data + batch * strides[0] + row * strides[1] + col * strides[2] (in elements).
struct MatrixOperand {
  const void* data = nullptr;
  int64_t strides[3] = {};
};

// out = alpha * (a @ b) + beta * addend over `batches` (n x k) @ (k x m) products, accumulated
// in int64 and wrapped to `dtype` (Int8, UInt8, Int32 or Int64; the others are refused), for
// Kernel: kernel_dtypes::mm_out, bmm_out or addmm_out. Without an addend (null data), beta is
// ignored.
template <typename Kernel>
void launch_integer_matmul(DType dtype, int64_t batches, int64_t n, int64_t k, int64_t m,
                           const MatrixOperand& a, const MatrixOperand& b,
                           const MatrixOperand& addend, void* out, const int64_t (&out_strides)[3],
                           const Scalar& alpha, const Scalar& beta, const LaunchTarget& target);

}  // namespace bp::cuda
