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

// out = the maximum (NaN above everything) or the mean of each window of input, for Kernel:
// kernel_dtypes::max_pool2d_out, max_pool2d_with_indices_out, avg_pool2d_out or
// adaptive_avg_pool2d_out. With `indices` (Int64, Max only), also the position y * W + x in its
// input plane of each maximum (the first NaN, else the first of equal maxima).
template <typename Kernel>
void launch_pool2d(DType dtype, PoolKind kind, const Image& input, const Image& out,
                   const SlidingWindow& window, const LaunchTarget& target,
                   const Image* indices = nullptr);

// The gradient of pooling: grad_input[n, c, y, x] = the sum, over the outputs whose windows hold
// (y, x), of grad_output's element times its share: 1 where `indices` (Int64, Max) names (y, x),
// else 0; 1 / the window's divisor for the averages, as launch_pool2d divides. Each input element
// gathers its terms in output order, so results do not depend on timing.
void launch_pool2d_backward(DType dtype, PoolKind kind, const Image& grad_output,
                            const Image& indices, const Image& grad_input,
                            const SlidingWindow& window, const LaunchTarget& target);

// The first of max pooling's `indices` (Int64, in N, C, H, W order) outside a plane of
// `plane_size` members, if any; waits for the check.
std::optional<int64_t> launch_check_pool_indices(const Image& indices, int64_t plane_size,
                                                 const LaunchTarget& target, GroupScratch& scratch);

// conv2d as an implicit GEMM (conv.cuh): out[n, o, y, x] = bias[o] + the sum over the window
// and the group's input channels of input * weight, accumulated in float (double for Double),
// tap after tap in order. weight is (C_out, C_in / groups, kH, kW) with any strides; bias, if
// any, has `bias_stride`.
void launch_conv2d(DType dtype, const Image& input, const Image& weight, const void* bias,
                   int64_t bias_stride, const Image& out, const SlidingWindow& window,
                   int64_t groups, const LaunchTarget& target);

// `batches` matrices of `rows` x `cols` elements, each element `in_batch_stride * b +
// in_row_stride * r + c` of the source; the target holds their transposes, (b, c, r) at
// `out_batch_stride * b + out_row_stride * c + r`.
struct TransposeShape {
  int64_t batches = 0, rows = 0, cols = 0;
  int64_t in_batch_stride = 0, in_row_stride = 0;
  int64_t out_batch_stride = 0, out_row_stride = 0;
};

// out[b][c][r] = in[b][r][c] (transpose.cuh), `element_size` bytes (1, 2, 4 or 8) moved
// unchanged; in and out must not overlap. conv2d's channels-last formulation (NCHW <-> NHWC).
void launch_transpose(size_t element_size, const void* in, void* out, const TransposeShape& shape,
                      const LaunchTarget& target);

// conv2d's gradients without cuDNN, accumulated like launch_conv2d: grad_input (N, C_in, H, W)
// from grad_output (N, C_out, H_out, W_out) and weight, and grad_weight (C_out, C_in / groups,
// kH, kW) from grad_output and input, each element one sum in a fixed order (a block's threads
// share grad_weight's sums and combine them in a fixed order).
void launch_conv2d_backward_input(DType dtype, const Image& grad_output, const Image& weight,
                                  const Image& grad_input, const SlidingWindow& window,
                                  int64_t groups, const LaunchTarget& target);
void launch_conv2d_backward_weight(DType dtype, const Image& grad_output, const Image& input,
                                   const Image& grad_weight, const SlidingWindow& window,
                                   int64_t groups, const LaunchTarget& target);

// --- training (batch_norm.cu, norm.cu, softmax.cu, activation_gradients.cu,
// indexed_rows.cu, nll_loss.cu, optimizer.cu) -----------------------------------------------------

// A per-channel vector of C elements: its first element and stride; null where absent.
struct ChannelVector {
  void* data = nullptr;
  int64_t stride = 0;
};

// Training batch norm: for each channel (one group of operands input, out), the batch mean and
// invstd = 1 / sqrt(biased variance + eps), written to `save_mean` and `save_invstd`, and
// out = (x - mean) * invstd * weight + bias (an absent weight or bias is not read). All of
// `dtype`.
void launch_batch_norm_training(DType dtype, const GroupShape<2>& shape, const void* input,
                                void* out, const ChannelVector& weight, const ChannelVector& bias,
                                const ChannelVector& save_mean, const ChannelVector& save_invstd,
                                double eps, const LaunchTarget& target);

// Batch norm's gradient for each channel (one group of operands grad_out, input, grad_input),
// with the mean and invstd of the forward: `mean` and `invstd` themselves, or, where
// `invstd_from_variance`, `invstd` holds the variance and invstd = 1 / sqrt(variance + eps).
// grad_weight = sum(grad_out * x^), grad_bias = sum(grad_out) with x^ = (x - mean) * invstd;
// grad_input = weight * invstd * (grad_out - mean(grad_out) - x^ mean(grad_out * x^)) where
// `training` (the batch statistics depend on x), else weight * invstd * grad_out.
void launch_batch_norm_backward(DType dtype, const GroupShape<3>& shape, const void* grad_out,
                                const void* input, void* grad_input, const ChannelVector& weight,
                                const ChannelVector& mean, const ChannelVector& invstd,
                                bool invstd_from_variance, bool training, double eps,
                                const ChannelVector& grad_weight, const ChannelVector& grad_bias,
                                const LaunchTarget& target);

// The gradient of softmax (or log_softmax, when `logarithm`) from its output, per group.
// Operands: grad_output, output, grad_input, all of `dtype`.
void launch_softmax_backward(DType dtype, const GroupShape<3>& shape, const void* grad_output,
                             const void* output, void* grad_input, bool logarithm,
                             const LaunchTarget& target);

// Layer norm's gradient of input, per group (operands: the kLayerNormGrad* ones), with
// mean and rstd one value per group and weight (may be null) read over the members.
enum LayerNormGradOperand {
  kLayerNormGradOut,
  kLayerNormGradInput,
  kLayerNormGradResult,
  kLayerNormGradMean,
  kLayerNormGradRstd,
  kLayerNormGradWeight,
  kLayerNormGradOperands
};
void launch_layer_norm_backward(DType dtype, const GroupShape<kLayerNormGradOperands>& shape,
                                const void* const* data, const LaunchTarget& target,
                                GroupScratch& scratch, void* grad_weight, void* grad_bias);

enum class ActivationGradient { GeluErf, GeluTanh, Threshold };
// grad_input = grad_output * the activation's derivative at self (threshold: grad_output where
// self > threshold, else 0). Operands: grad_input, grad_output, self, all of `dtype`.
void launch_activation_gradient(ActivationGradient kind, DType dtype,
                                const ElementwiseLaunch<3>& launch, double threshold);

// Dense (outer, rows, inner) out = base (zeros where null) plus, for each i of the n positions of
// `index` (Int64, dense) that name a row r, scale(r) * source's dense (outer, n, inner) slice i,
// added in the order of i: scale(r) is `alpha`, except with `embedding` (index_add's alpha
// otherwise), where it is 0 for `padding_row` and, with `scale_by_frequency`, 1 / the number of
// positions naming r. No atomics: the positions are sorted by row (a stable radix sort), then
// each element of out sums its row's terms. An index outside [0, rows) is returned (the one at
// the first such position; nullopt when all are in range, which waits for the launch), out then
// unwritten. For Kernel: kernel_dtypes::index_add_out or embedding_dense_backward_out.
struct IndexedRows {
  int64_t outer = 1, rows = 0, n = 0, inner = 1;
  const int64_t* index = nullptr;
  const void* base = nullptr;
  const void* source = nullptr;
  void* out = nullptr;
  Scalar alpha = 1;
  bool embedding = false;
  int64_t padding_row = -1;
  bool scale_by_frequency = false;
};
template <typename Kernel>
std::optional<int64_t> launch_indexed_row_sums(DType dtype, const IndexedRows& rows,
                                               const LaunchTarget& target, GroupScratch& scratch);

// nll_loss over `samples` dense rows of `classes` log-probabilities `self` and Int64 `target`
// (weight: C elements, or null): forward writes the loss (per sample when !reduce, else the sum,
// divided by the total weight when `mean`) and the total weight (0 when !reduce); backward fills
// grad_input (dense, of self's shape) with 0 but -weight[t] * grad at each sample's target,
// grad being grad_output's element of the sample (when !reduce) or its one element (divided by
// total_weight when `mean`). A target that is neither `ignore_index` nor a class is returned (the
// first, by sample; which waits for the launch), the outputs then unwritten or partly written.
struct NllLoss {
  int64_t samples = 0, classes = 0;
  const void* self = nullptr;
  const int64_t* target = nullptr;
  const void* weight = nullptr;
  int64_t ignore_index = -100;
  bool reduce = true;
  bool mean = true;
};
std::optional<int64_t> launch_nll_loss_forward(DType dtype, const NllLoss& loss, void* output,
                                               void* total_weight, const LaunchTarget& target,
                                               GroupScratch& scratch);
std::optional<int64_t> launch_nll_loss_backward(DType dtype, const NllLoss& loss,
                                                const void* grad_output, bool per_sample,
                                                const void* total_weight, void* grad_input,
                                                const LaunchTarget& target, GroupScratch& scratch);

// One optimizer step over the elements of a launch, in the compute type, with PyTorch's rules
// (torch.optim.SGD; torch.optim.AdamW without amsgrad). Operands: param_out,
// momentum_buffer_out, param, grad, momentum_buffer (SGD); param_out, exp_avg_out,
// exp_avg_sq_out, param, grad, exp_avg, exp_avg_sq (AdamW). An element is read before it is
// written, so outputs may be their inputs.
struct SgdStep {
  double lr, momentum, dampening, weight_decay;
  bool nesterov, first_step;
};
void launch_sgd_step(DType dtype, const ElementwiseLaunch<5>& launch, const SgdStep& step);
struct AdamwStep {
  double lr, beta1, beta2, weight_decay, eps;
  int64_t step;
};
void launch_adamw_step(DType dtype, const ElementwiseLaunch<7>& launch, const AdamwStep& step);

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
