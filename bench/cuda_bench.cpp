// The CUDA backend against the limits of the GPU it runs on, each pair measured in one run:
//   - elementwise ops (add, mul, relu, gelu on 64M elements, Float and BFloat16) and row ops
//     (sum over each row, softmax, log_softmax, layer norm, RMS norm on 8192x8192 and 32768x4096)
//     as bytes moved per second, next to a device-to-device cudaMemcpy's (bytes read plus written);
//   - mm and addmm (4096^3, 8192^3; Float and BFloat16) next to cuBLASLt called directly with
//     the same types, compute type and, for addmm, bias epilogue (TF32 for Float only when
//     BACKPLANE_CUDA_ALLOW_TF32=1, for both);
//   - conv2d with bias on ResNet-50's layer shapes (batch 32, Float16, NCHW) next to cuDNN called
//     directly on the same tensors with the fastest of the algorithms
//     cudnnFindConvolutionForwardAlgorithm ranks first, timed again, and cudnnAddTensor for the
//     bias (only where CMake found cuDNN for the plugin); each row's label says which formulation
//     and algorithm ran;
//   - scaled_dot_product_attention (8 sequences, 16 heads, 2048 and 8192 positions, head dim 128,
//     BFloat16, causal and not) through the fused kernel, next to the composite path (matmul,
//     softmax, matmul) that an explicit Bool mask selects;
//   - bp::add of one element, end to end (meta, allocation, dispatch, launch) and waited for with
//     bp::synchronize, next to a bare kernel launch and a stream synchronize.
// Every other timed iteration ends with cudaDeviceSynchronize, which waits for the plugin's
// stream too.
// Without a CUDA device it prints why and exits with 77 (skipped). See bench/README.md.
#include "cuda_bench_kernel.h"
#include "resnet50_layers.h"
#include "target_table.h"

#include <backplane/backplane.h>

#include <benchmark/benchmark.h>

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#if BACKPLANE_BENCH_CUDNN
#include <cudnn.h>
#endif

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

namespace {

void check(cudaError_t error, const char* what) {
  if (error != cudaSuccess)
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(error));
}

void check(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw std::runtime_error(std::string(what) + ": " + cublasLtGetStatusString(status));
  }
}

#if BACKPLANE_BENCH_CUDNN
void check(cudnnStatus_t status, const char* what) {
  if (status != CUDNN_STATUS_SUCCESS)
    throw std::runtime_error(std::string(what) + ": " + cudnnGetErrorString(status));
}
#endif

void wait_for_device() { check(cudaDeviceSynchronize(), "cudaDeviceSynchronize"); }

std::string dtype_label(bp::DType dtype) {
  if (dtype == bp::kBFloat16) return "bf16";
  return dtype == bp::kFloat16 ? "f16" : "f32";
}

// --- memory-bound ops ----------------------------------------------------------------------------

using Op = std::function<void()>;

// Values in [0, 1) made on the device (the host's random generator would take longer than the
// benchmarks on these sizes).
bp::Tensor device_values(const std::vector<int64_t>& sizes, bp::DType dtype, bp::Device device) {
  int64_t numel = 1;
  for (const int64_t size : sizes) numel *= size;
  return bp::arange(numel, bp::kFloat32, device)
      .mul(1.0 / static_cast<double>(numel))
      .view(sizes)
      .to(dtype);
}

// Times `op` (waited for) and reports `bytes` moved per call as bytes per second.
void run_memory_bound(benchmark::State& state, const Op& op, int64_t bytes) {
  op();
  wait_for_device();
  for (auto _ : state) {
    op();
    wait_for_device();
  }
  state.SetBytesProcessed(state.iterations() * bytes);
}

// The reference: cudaMemcpyAsync of `bytes` between two device buffers; it moves 2 * bytes.
void BM_memcpy(benchmark::State& state, bp::Device device, int64_t bytes) {
  check(cudaSetDevice(device.index()), "cudaSetDevice");
  cudaStream_t stream = nullptr;
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  void* src = nullptr;
  void* dst = nullptr;
  check(cudaMalloc(&src, bytes), "cudaMalloc");
  check(cudaMalloc(&dst, bytes), "cudaMalloc");
  check(cudaMemset(src, 0, bytes), "cudaMemset");
  run_memory_bound(
      state,
      [&] {
        check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream),
              "cudaMemcpyAsync");
      },
      2 * bytes);
  cudaFree(src);
  cudaFree(dst);
  cudaStreamDestroy(stream);
}

enum class Elementwise { Add, Mul, Relu, Gelu };

void BM_elementwise(benchmark::State& state, bp::Device device, Elementwise which, bp::DType dtype,
                    int64_t n) {
  const bp::Tensor a = device_values({n}, dtype, device), b = device_values({n}, dtype, device);
  bp::Tensor out = bp::empty({n}, dtype, device);
  const auto element = static_cast<int64_t>(bp::element_size(dtype));
  switch (which) {
    case Elementwise::Add:
      return run_memory_bound(
          state, [&] { bp::add_out(out, a, b); }, 3 * n * element);
    case Elementwise::Mul:
      return run_memory_bound(
          state, [&] { bp::mul_out(out, a, b); }, 3 * n * element);
    case Elementwise::Relu:
      return run_memory_bound(
          state, [&] { bp::relu_out(out, a); }, 2 * n * element);
    case Elementwise::Gelu:
      return run_memory_bound(
          state, [&] { bp::gelu_out(out, a); }, 2 * n * element);
  }
}

enum class RowOp { Sum, Softmax, LogSoftmax, LayerNorm, RmsNorm };

void BM_rows(benchmark::State& state, bp::Device device, RowOp which, bp::DType dtype, int64_t rows,
             int64_t cols) {
  const bp::Tensor x = device_values({rows, cols}, dtype, device);
  const bp::Tensor weight = device_values({cols}, dtype, device),
                   bias = device_values({cols}, dtype, device);
  bp::Tensor out = bp::empty({rows, cols}, dtype, device);
  bp::Tensor sums = bp::empty({rows}, dtype, device);
  bp::Tensor mean = bp::empty({rows, 1}, dtype, device), rstd = bp::empty({rows, 1}, dtype, device);
  const int64_t bytes = rows * cols * static_cast<int64_t>(bp::element_size(dtype));
  switch (which) {
    case RowOp::Sum:
      return run_memory_bound(
          state, [&] { bp::sum_out(sums, x, {1}); }, bytes);
    case RowOp::Softmax:
      return run_memory_bound(
          state, [&] { bp::softmax_out(out, x, 1); }, 2 * bytes);
    case RowOp::LogSoftmax:
      return run_memory_bound(
          state, [&] { bp::log_softmax_out(out, x, 1); }, 2 * bytes);
    case RowOp::LayerNorm:
      return run_memory_bound(
          state, [&] { bp::native_layer_norm_out(out, mean, rstd, x, {cols}, weight, bias, 1e-5); },
          2 * bytes);
    case RowOp::RmsNorm:
      return run_memory_bound(
          state, [&] { bp::rms_norm_out(out, x, {cols}, weight, 1e-5); }, 2 * bytes);
  }
}

// --- matrix products -----------------------------------------------------------------------------

bool tf32_allowed() {
  const char* value = std::getenv("BACKPLANE_CUDA_ALLOW_TF32");
  return value != nullptr && std::strcmp(value, "1") == 0;
}

void report_flops(benchmark::State& state, double flops_per_iteration) {
  state.counters["TFLOP/s"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * flops_per_iteration / 1e12,
                         benchmark::Counter::kIsRate);
}

double matmul_flops(int64_t n) {
  const auto size = static_cast<double>(n);
  return 2.0 * size * size * size;
}

void BM_matmul(benchmark::State& state, bp::Device device, bp::DType dtype, int64_t n,
               bool with_bias) {
  const bp::Tensor a = device_values({n, n}, dtype, device),
                   b = device_values({n, n}, dtype, device);
  const bp::Tensor bias = device_values({n}, dtype, device);
  bp::Tensor out = bp::empty({n, n}, dtype, device);
  run_memory_bound(
      state, [&] { with_bias ? bp::addmm_out(out, bias, a, b) : bp::mm_out(out, a, b); }, 0);
  report_flops(state, matmul_flops(n));
}

// cuBLASLt called directly: row-major out = a @ b (+ bias per column) as column-major
// out^T = b^T @ a^T, the same formulation the plugin uses.
class ReferenceMatmul {
 public:
  ReferenceMatmul(bp::DType dtype, int64_t n, bool with_bias) : n_(n) {
    const cudaDataType_t type = dtype == bp::kBFloat16 ? CUDA_R_16BF : CUDA_R_32F;
    const size_t element = bp::element_size(dtype);
    const cublasComputeType_t compute =
        dtype == bp::kFloat32 && tf32_allowed() ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    check(cublasLtCreate(&handle_), "cublasLtCreate");
    check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    for (void** buffer : {&a_, &b_, &out_})
      check(cudaMalloc(buffer, n * n * element), "cudaMalloc");
    check(cudaMalloc(&bias_, n * element), "cudaMalloc");
    check(cudaMemset(a_, 0, n * n * element), "cudaMemset");
    check(cudaMemset(b_, 0, n * n * element), "cudaMemset");
    check(cudaMemset(bias_, 0, n * element), "cudaMemset");
    check(cudaMalloc(&workspace_, kWorkspaceBytes), "cudaMalloc");
    check(cublasLtMatmulDescCreate(&desc_, compute, CUDA_R_32F), "cublasLtMatmulDescCreate");
    if (with_bias) {
      const cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_BIAS;
      check(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue,
                                           sizeof epilogue),
            "bias");
      check(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias_,
                                           sizeof bias_),
            "bias");
    }
    check(cublasLtMatrixLayoutCreate(&layout_, type, n, n, n), "cublasLtMatrixLayoutCreate");
    cublasLtMatmulPreference_t preference = nullptr;
    check(cublasLtMatmulPreferenceCreate(&preference), "cublasLtMatmulPreferenceCreate");
    const uint64_t workspace = kWorkspaceBytes;
    check(cublasLtMatmulPreferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                               &workspace, sizeof workspace),
          "workspace");
    int count = 0;
    check(cublasLtMatmulAlgoGetHeuristic(handle_, desc_, layout_, layout_, layout_, layout_,
                                         preference, 1, &algo_, &count),
          "cublasLtMatmulAlgoGetHeuristic");
    cublasLtMatmulPreferenceDestroy(preference);
    if (count == 0) throw std::runtime_error("cuBLASLt has no algorithm");
  }
  ~ReferenceMatmul() {
    cublasLtMatrixLayoutDestroy(layout_);
    cublasLtMatmulDescDestroy(desc_);
    for (void* buffer : {a_, b_, out_, bias_, workspace_}) cudaFree(buffer);
    cudaStreamDestroy(stream_);
    cublasLtDestroy(handle_);
  }
  ReferenceMatmul(const ReferenceMatmul&) = delete;
  ReferenceMatmul& operator=(const ReferenceMatmul&) = delete;

  void run() {
    const float alpha = 1, beta = 0;
    check(cublasLtMatmul(handle_, desc_, &alpha, b_, layout_, a_, layout_, &beta, out_, layout_,
                         out_, layout_, &algo_.algo, workspace_, kWorkspaceBytes, stream_),
          "cublasLtMatmul");
  }

 private:
  static constexpr size_t kWorkspaceBytes = size_t{32} << 20;  // as the plugin
  int64_t n_;
  cublasLtHandle_t handle_ = nullptr;
  cudaStream_t stream_ = nullptr;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t layout_ = nullptr;
  cublasLtMatmulHeuristicResult_t algo_{};
  void* a_ = nullptr;
  void* b_ = nullptr;
  void* out_ = nullptr;
  void* bias_ = nullptr;
  void* workspace_ = nullptr;
};

void BM_reference_matmul(benchmark::State& state, bp::Device device, bp::DType dtype, int64_t n,
                         bool with_bias) {
  check(cudaSetDevice(device.index()), "cudaSetDevice");
  ReferenceMatmul reference(dtype, n, with_bias);
  run_memory_bound(
      state, [&] { reference.run(); }, 0);
  report_flops(state, matmul_flops(n));
}

// --- convolution ---------------------------------------------------------------------------------

// One layer's input, weight and bias at `batch`, Float16 in NCHW on the device.
struct ConvOperands {
  ConvOperands(const bench::ConvLayer& layer, int64_t batch, bp::Device device)
      : input(device_values({batch, layer.in_channels, layer.size, layer.size}, bp::kFloat16,
                            device)),
        weight(device_values({layer.out_channels, layer.in_channels, layer.kernel, layer.kernel},
                             bp::kFloat16, device)),
        bias(device_values({layer.out_channels}, bp::kFloat16, device)) {}
  bp::Tensor input, weight, bias;
};

// cuDNN's forward algorithms by their cudnnConvolutionFwdAlgo_t numbers.
std::string conv_algorithm_name(int64_t algorithm) {
  static constexpr const char* kNames[] = {
      "IMPLICIT_GEMM", "IMPLICIT_PRECOMP_GEMM", "GEMM", "DIRECT", "FFT", "FFT_TILING",
      "WINOGRAD",      "WINOGRAD_NONFUSED"};
  if (algorithm >= 0 && algorithm < static_cast<int64_t>(std::size(kNames)))
    return kNames[algorithm];
  return "algorithm " + std::to_string(algorithm);
}

// The cuda plugin's counter "cudaN.conv2d.<name>" of `device`.
uint64_t conv_counter(bp::Device device, const std::string& name) {
  const std::string wanted = "cuda" + std::to_string(device.index()) + ".conv2d." + name;
  for (const bp::BackendCounter& counter : bp::backend_counters("cuda")) {
    if (counter.name == wanted) return counter.value;
  }
  return 0;
}

void BM_conv2d(benchmark::State& state, bp::Device device, const bench::ConvLayer& layer,
               int64_t batch) {
  const ConvOperands operands(layer, batch, device);
  const uint64_t cudnn_runs = conv_counter(device, "cudnn_runs");
  run_memory_bound(
      state,
      [&] {
        bp::conv2d(operands.input, operands.weight, operands.bias, {layer.stride}, {layer.padding});
      },
      0);
  report_flops(state, layer.flops(batch));
  // What ran, from the plugin's counters: its formulation (the NCHW tensors, or NHWC copies) and
  // cuDNN's algorithm, or the plugin's own kernel where no run went through cuDNN.
  if (conv_counter(device, "cudnn_runs") == cudnn_runs) {
    state.SetLabel("the plugin's implicit-GEMM kernel");
  } else {
    state.SetLabel(
        std::string("cuDNN ") + (conv_counter(device, "cudnn_nhwc") ? "NHWC " : "NCHW ") +
        conv_algorithm_name(static_cast<int64_t>(conv_counter(device, "cudnn_algorithm"))));
  }
}

#if BACKPLANE_BENCH_CUDNN
// Where a device tensor's first element lives, for handing the tensor to cuDNN.
void* device_address(const bp::Tensor& tensor) {
  return static_cast<char*>(tensor.impl()->storage()->data()) +
         tensor.storage_offset() * tensor.element_size();
}

cudnnTensorDescriptor_t half_nchw_descriptor(bp::IntArrayRef sizes) {
  cudnnTensorDescriptor_t descriptor = nullptr;
  check(cudnnCreateTensorDescriptor(&descriptor), "cudnnCreateTensorDescriptor");
  check(cudnnSetTensor4dDescriptor(descriptor, CUDNN_TENSOR_NCHW, CUDNN_DATA_HALF,
                                   static_cast<int>(sizes[0]), static_cast<int>(sizes[1]),
                                   static_cast<int>(sizes[2]), static_cast<int>(sizes[3])),
        "cudnnSetTensor4dDescriptor");
  return descriptor;
}

// cuDNN called directly on the operands, NCHW as they are, described as the plugin describes
// them (Float32 accumulation, tensor-op math), with the fastest algorithm: the first few that
// cudnnFindConvolutionForwardAlgorithm ranks fastest (from one run of each, an order that moves
// between processes) are timed again over kReferenceTimedRuns runs each, and the lowest median
// wins, as the plugin times its own candidates; the bias is added afterwards with
// cudnnAddTensor, where the plugin adds it in cuDNN's blend.
class ReferenceConv {
 public:
  ReferenceConv(const bench::ConvLayer& layer, const ConvOperands& operands)
      : operands_(operands),
        out_(bp::empty(
            {operands.input.size(0), layer.out_channels, layer.out_size(), layer.out_size()},
            bp::kFloat16, operands.input.device())) {
    check(cudnnCreate(&handle_), "cudnnCreate");
    check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    check(cudnnSetStream(handle_, stream_), "cudnnSetStream");
    input_descriptor_ = half_nchw_descriptor(operands.input.sizes());
    bias_descriptor_ = half_nchw_descriptor({1, layer.out_channels, 1, 1});
    out_descriptor_ = half_nchw_descriptor(out_.sizes());
    check(cudnnCreateFilterDescriptor(&weight_descriptor_), "cudnnCreateFilterDescriptor");
    check(cudnnSetFilter4dDescriptor(
              weight_descriptor_, CUDNN_DATA_HALF, CUDNN_TENSOR_NCHW,
              static_cast<int>(layer.out_channels), static_cast<int>(layer.in_channels),
              static_cast<int>(layer.kernel), static_cast<int>(layer.kernel)),
          "cudnnSetFilter4dDescriptor");
    check(cudnnCreateConvolutionDescriptor(&conv_descriptor_), "cudnnCreateConvolutionDescriptor");
    const auto padding = static_cast<int>(layer.padding), stride = static_cast<int>(layer.stride);
    check(cudnnSetConvolution2dDescriptor(conv_descriptor_, padding, padding, stride, stride, 1, 1,
                                          CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
          "cudnnSetConvolution2dDescriptor");
    check(cudnnSetConvolutionMathType(conv_descriptor_, CUDNN_TENSOR_OP_MATH),
          "cudnnSetConvolutionMathType");
    cudnnConvolutionFwdAlgoPerf_t results[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    int count = 0;
    check(cudnnFindConvolutionForwardAlgorithm(handle_, input_descriptor_, weight_descriptor_,
                                               conv_descriptor_, out_descriptor_,
                                               CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &count, results),
          "cudnnFindConvolutionForwardAlgorithm");
    float fastest_ms = -1;
    for (int i = 0, timed = 0; i < count && timed < kReferenceCandidates; ++i) {
      if (results[i].status != CUDNN_STATUS_SUCCESS) continue;
      ++timed;
      use(results[i].algo, results[i].mathType);
      const float ms = median_milliseconds();
      if (fastest_ms < 0 || ms < fastest_ms) {
        fastest_ms = ms;
        fastest_ = results[i];
      }
    }
    if (fastest_ms < 0)
      throw std::runtime_error("cuDNN has no algorithm for " + std::string(layer.name));
    use(fastest_.algo, fastest_.mathType);
  }
  ~ReferenceConv() {
    cudaFree(workspace_);
    cudnnDestroyConvolutionDescriptor(conv_descriptor_);
    cudnnDestroyFilterDescriptor(weight_descriptor_);
    for (cudnnTensorDescriptor_t descriptor :
         {input_descriptor_, bias_descriptor_, out_descriptor_}) {
      cudnnDestroyTensorDescriptor(descriptor);
    }
    cudnnDestroy(handle_);
    cudaStreamDestroy(stream_);
  }
  ReferenceConv(const ReferenceConv&) = delete;
  ReferenceConv& operator=(const ReferenceConv&) = delete;

  // cuDNN's algorithm and math type that run() runs, as "IMPLICIT_PRECOMP_GEMM, math 1".
  std::string choice() const {
    return "cuDNN NCHW " + conv_algorithm_name(fastest_.algo) + ", math " +
           std::to_string(static_cast<int>(fastest_.mathType));
  }

  void run() {
    const float one = 1, zero = 0;
    check(cudnnConvolutionForward(handle_, &one, input_descriptor_, device_address(operands_.input),
                                  weight_descriptor_, device_address(operands_.weight),
                                  conv_descriptor_, algorithm_, workspace_, workspace_bytes_, &zero,
                                  out_descriptor_, device_address(out_)),
          "cudnnConvolutionForward");
    check(cudnnAddTensor(handle_, &one, bias_descriptor_, device_address(operands_.bias), &one,
                         out_descriptor_, device_address(out_)),
          "cudnnAddTensor");
  }

 private:
  const ConvOperands& operands_;
  bp::Tensor out_;
  cudnnHandle_t handle_ = nullptr;
  cudaStream_t stream_ = nullptr;
  cudnnTensorDescriptor_t input_descriptor_ = nullptr;
  cudnnTensorDescriptor_t bias_descriptor_ = nullptr;
  cudnnTensorDescriptor_t out_descriptor_ = nullptr;
  cudnnFilterDescriptor_t weight_descriptor_ = nullptr;
  cudnnConvolutionDescriptor_t conv_descriptor_ = nullptr;
  static constexpr int kReferenceCandidates = 3, kReferenceTimedRuns = 5;

  // Runs `algorithm` from now on, with the math type the search measured it with (the
  // descriptor's, or a compatible one) and the workspace it needs.
  void use(cudnnConvolutionFwdAlgo_t algorithm, cudnnMathType_t math) {
    algorithm_ = algorithm;
    check(cudnnSetConvolutionMathType(conv_descriptor_, math), "cudnnSetConvolutionMathType");
    size_t bytes = 0;
    check(cudnnGetConvolutionForwardWorkspaceSize(handle_, input_descriptor_, weight_descriptor_,
                                                  conv_descriptor_, out_descriptor_, algorithm_,
                                                  &bytes),
          "cudnnGetConvolutionForwardWorkspaceSize");
    if (bytes > workspace_bytes_) {
      check(cudaFree(workspace_), "cudaFree");
      workspace_ = nullptr;
      check(cudaMalloc(&workspace_, bytes), "cudaMalloc");
      workspace_bytes_ = bytes;
    }
  }

  // The median of kReferenceTimedRuns runs (after one untimed), timed with events on the stream.
  float median_milliseconds() {
    cudaEvent_t start = nullptr, stop = nullptr;
    check(cudaEventCreate(&start), "cudaEventCreate");
    check(cudaEventCreate(&stop), "cudaEventCreate");
    std::vector<float> times;
    for (int i = -1; i < kReferenceTimedRuns; ++i) {
      check(cudaEventRecord(start, stream_), "cudaEventRecord");
      run();
      check(cudaEventRecord(stop, stream_), "cudaEventRecord");
      check(cudaEventSynchronize(stop), "cudaEventSynchronize");
      float ms = 0;
      check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
      if (i >= 0) times.push_back(ms);
    }
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    std::sort(times.begin(), times.end());
    return times[times.size() / 2];
  }

  cudnnConvolutionFwdAlgoPerf_t fastest_{};
  cudnnConvolutionFwdAlgo_t algorithm_{};
  size_t workspace_bytes_ = 0;
  void* workspace_ = nullptr;
};

void BM_reference_conv2d(benchmark::State& state, bp::Device device, const bench::ConvLayer& layer,
                         int64_t batch) {
  check(cudaSetDevice(device.index()), "cudaSetDevice");
  const ConvOperands operands(layer, batch, device);
  ReferenceConv reference(layer, operands);
  run_memory_bound(
      state, [&] { reference.run(); }, 0);
  report_flops(state, layer.flops(batch));
  state.SetLabel(reference.choice());
}
#endif

// --- attention -----------------------------------------------------------------------------------

constexpr int64_t kAttentionBatch = 8, kAttentionHeads = 16, kAttentionHeadDim = 128;

// Query, key and value of kAttentionBatch sequences of `length` positions, BFloat16 on the device.
struct AttentionOperands {
  AttentionOperands(int64_t length, bp::Device device)
      : query(values(length, device)), key(values(length, device)), value(values(length, device)) {}
  static bp::Tensor values(int64_t length, bp::Device device) {
    return device_values({kAttentionBatch, kAttentionHeads, length, kAttentionHeadDim},
                         bp::kBFloat16, device);
  }
  bp::Tensor query, key, value;
};

// The two matrix products over every (query, key) pair; a causal mask leaves half of them.
double attention_flops(int64_t length, bool is_causal) {
  const double flops = 4.0 * kAttentionBatch * kAttentionHeads * static_cast<double>(length) *
                       static_cast<double>(length) * kAttentionHeadDim;
  return is_causal ? flops / 2 : flops;
}

// Times `op`; a device without room for the composite path's score tensors (17 GB each in
// BFloat16 at 8192 positions) skips the row instead of ending the run.
void run_attention(benchmark::State& state, const Op& op, double flops_per_iteration) {
  try {
    run_memory_bound(state, op, 0);
  } catch (const bp::Error& error) {
    if (error.code() != bp::ErrorCode::OutOfMemory) throw;
    state.SkipWithError(("out of device memory: " + std::string(error.what())).c_str());
    return;
  }
  report_flops(state, flops_per_iteration);
}

void BM_attention(benchmark::State& state, bp::Device device, int64_t length, bool is_causal) {
  const AttentionOperands attention(length, device);
  // Where the backend declines to fuse a case, scaled_dot_product_attention quietly takes the
  // composite path, and this row would time that instead.
  try {
    bp::_scaled_dot_product_fused_attention(attention.query, attention.key, attention.value,
                                            is_causal);
  } catch (const bp::Error& error) {
    if (error.code() != bp::ErrorCode::NotImplemented) throw;
    state.SkipWithError(("no fused kernel for this case: " + std::string(error.what())).c_str());
    return;
  }
  run_attention(
      state,
      [&] {
        bp::scaled_dot_product_attention(attention.query, attention.key, attention.value,
                                         std::nullopt, 0.0, is_causal);
      },
      attention_flops(length, is_causal));
}

// The same attention through the composite path, which any explicit mask selects: all true, or
// the causal mask (key position j attends for query position i when j <= i).
void BM_attention_composite(benchmark::State& state, bp::Device device, int64_t length,
                            bool is_causal) {
  const AttentionOperands attention(length, device);
  const bp::Tensor mask =
      is_causal ? bp::lt(bp::arange(length, bp::kInt64, device).view({1, length}),
                         bp::arange(1, length + 1, 1, bp::kInt64, device).view({length, 1}))
                : bp::ones({length, length}, bp::kBool, device);
  run_attention(
      state,
      [&] {
        bp::scaled_dot_product_attention(attention.query, attention.key, attention.value, mask);
      },
      attention_flops(length, is_causal));
}

// --- latency -------------------------------------------------------------------------------------

void BM_add_one_element(benchmark::State& state, bp::Device device) {
  const bp::Tensor a = bp::ones({1}, bp::kFloat32, device), b = bp::ones({1}, bp::kFloat32, device);
  for (auto _ : state) {
    bp::Tensor c = bp::add(a, b);
    bp::synchronize(device);
    benchmark::DoNotOptimize(c.impl());
  }
}

void BM_bare_launch(benchmark::State& state, bp::Device device) {
  check(cudaSetDevice(device.index()), "cudaSetDevice");
  cudaStream_t stream = nullptr;
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  void* memory = nullptr;
  check(cudaMalloc(&memory, 3 * sizeof(float)), "cudaMalloc");
  const auto buffer = static_cast<float*>(memory);
  for (auto _ : state) {
    check(launch_add_one_element(buffer, buffer + 1, buffer + 2, stream), "launch");
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  }
  cudaFree(memory);
  cudaStreamDestroy(stream);
}

// --- registration --------------------------------------------------------------------------------

// Registers every benchmark, and returns the targets of the CUDA backend as ratios between them
// (bench/README.md).
std::vector<bench::Target> register_benchmarks(bp::Device device) {
  using Measure = bench::Target::Measure;
  std::vector<bench::Target> targets;
  const std::string gpu = device.str();
  const int64_t elements = int64_t{64} << 20;
  for (const bp::DType dtype : {bp::kFloat32, bp::kBFloat16}) {
    const std::string type = dtype_label(dtype);
    const int64_t bytes = elements * static_cast<int64_t>(bp::element_size(dtype));
    const std::string memcpy_name = "memcpy 64M " + type + " (reference)/" + gpu;
    benchmark::RegisterBenchmark(memcpy_name.c_str(), BM_memcpy, device, bytes)->UseRealTime();
    for (const auto& [which, name] :
         {std::pair{Elementwise::Add, "add"}, std::pair{Elementwise::Mul, "mul"},
          std::pair{Elementwise::Relu, "relu"}, std::pair{Elementwise::Gelu, "gelu"}}) {
      const std::string op = std::string(name) + " 64M " + type;
      benchmark::RegisterBenchmark((op + "/" + gpu).c_str(), BM_elementwise, device, which, dtype,
                                   elements)
          ->UseRealTime();
      targets.push_back({op + " vs memcpy", op + "/" + gpu, memcpy_name, Measure::Rate, 0.9});
    }
    for (const auto& [rows, cols] : {std::pair<int64_t, int64_t>{8192, 8192}, {32768, 4096}}) {
      const std::string shape = std::to_string(rows) + "x" + std::to_string(cols) + " " + type;
      for (const auto& [which, name] :
           {std::pair{RowOp::Sum, "sum over rows"}, std::pair{RowOp::Softmax, "softmax"},
            std::pair{RowOp::LogSoftmax, "log_softmax"}, std::pair{RowOp::LayerNorm, "layer_norm"},
            std::pair{RowOp::RmsNorm, "rms_norm"}}) {
        const std::string op = std::string(name) + " " + shape;
        benchmark::RegisterBenchmark((op + "/" + gpu).c_str(), BM_rows, device, which, dtype, rows,
                                     cols)
            ->UseRealTime();
        targets.push_back({op + " vs memcpy", op + "/" + gpu, memcpy_name, Measure::Rate, 0.85});
      }
    }
    for (const int64_t n : {int64_t{4096}, int64_t{8192}}) {
      const std::string size = std::to_string(n) + "^3 " + type;
      for (const bool with_bias : {false, true}) {
        const std::string op = with_bias ? "addmm " : "mm ";
        benchmark::RegisterBenchmark((op + size + "/" + gpu).c_str(), BM_matmul, device, dtype, n,
                                     with_bias)
            ->UseRealTime();
        benchmark::RegisterBenchmark((op + size + " cuBLASLt (reference)/" + gpu).c_str(),
                                     BM_reference_matmul, device, dtype, n, with_bias)
            ->UseRealTime();
        targets.push_back({op + size + " vs cuBLASLt", op + size + "/" + gpu,
                           op + size + " cuBLASLt (reference)/" + gpu, Measure::Rate, 0.95});
      }
    }
  }
  const int64_t conv_batch = 32;
  for (const bench::ConvLayer& layer : bench::kResNet50Layers) {
    const std::string name = std::string("conv2d ") + layer.name + " batch " +
                             std::to_string(conv_batch) + " " + dtype_label(bp::kFloat16);
    benchmark::RegisterBenchmark((name + "/" + gpu).c_str(), BM_conv2d, device, layer, conv_batch)
        ->UseRealTime();
#if BACKPLANE_BENCH_CUDNN
    benchmark::RegisterBenchmark((name + " cuDNN (reference)/" + gpu).c_str(), BM_reference_conv2d,
                                 device, layer, conv_batch)
        ->UseRealTime();
    targets.push_back({name + " vs cuDNN", name + "/" + gpu, name + " cuDNN (reference)/" + gpu,
                       Measure::Rate, 0.9});
#endif
  }
  for (const int64_t length : {int64_t{2048}, int64_t{8192}}) {
    for (const bool is_causal : {false, true}) {
      const std::string name = "attention " + std::to_string(kAttentionBatch) + "x" +
                               std::to_string(kAttentionHeads) + "x" + std::to_string(length) +
                               "x" + std::to_string(kAttentionHeadDim) + " " +
                               dtype_label(bp::kBFloat16) + (is_causal ? " causal" : "");
      benchmark::RegisterBenchmark((name + "/" + gpu).c_str(), BM_attention, device, length,
                                   is_causal)
          ->UseRealTime();
      benchmark::RegisterBenchmark((name + " composite path (reference)/" + gpu).c_str(),
                                   BM_attention_composite, device, length, is_causal)
          ->UseRealTime();
      targets.push_back({name + " vs the composite path", name + "/" + gpu,
                         name + " composite path (reference)/" + gpu, Measure::Rate, 3.0});
      targets.push_back({name + " vs mm 4096^3 bf16 (FLOP rate)", name + "/" + gpu,
                         "mm 4096^3 bf16/" + gpu, Measure::Rate, 0.5});
    }
  }
  benchmark::RegisterBenchmark(("add 1 element, end to end/" + gpu).c_str(), BM_add_one_element,
                               device);
  benchmark::RegisterBenchmark(("bare kernel launch + synchronize (reference)/" + gpu).c_str(),
                               BM_bare_launch, device);
  targets.push_back({"add 1 element, end to end, vs a bare launch + synchronize",
                     "add 1 element, end to end/" + gpu,
                     "bare kernel launch + synchronize (reference)/" + gpu, Measure::Time, 1.5,
                     /*at_most=*/true});
  return targets;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<bp::Device> gpus;
  for (const bp::Device& device : bp::devices()) {
    if (device.type_name() == "cuda") gpus.push_back(device);
  }
  if (gpus.empty()) {
    std::string reason = "the cuda plugin did not load";
    for (const bp::PluginInfo& plugin : bp::runtime_info().plugins) {
      if (plugin.name == "cuda") reason = plugin.device_note;
    }
    std::printf("bench_cuda: skipped, no CUDA device: %s\n", reason.c_str());
    return 77;
  }
  std::vector<bench::Target> targets = register_benchmarks(gpus.front());
  const bool console = bench::console_format(argc, argv);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  if (console) {
    bench::TargetTableReporter reporter(
        std::move(targets), isatty(fileno(stdout)) ? bench::TargetTableReporter::OO_ColorTabular
                                                   : bench::TargetTableReporter::OO_Tabular);
    benchmark::RunSpecifiedBenchmarks(&reporter);
  } else {
    benchmark::RunSpecifiedBenchmarks();
  }
  benchmark::Shutdown();
  return 0;
}
