// The CUDA backend against the limits of the GPU it runs on, each pair measured in one run:
//   - elementwise ops (add, mul, relu, gelu on 64M elements, Float and BFloat16) and row ops
//     (sum over each row, softmax, layer norm on 8192x8192 and 32768x4096) as bytes moved per
//     second, next to a device-to-device cudaMemcpy's (bytes read plus written);
//   - mm and addmm (4096^3, 8192^3; Float and BFloat16) next to cuBLASLt called directly with
//     the same types, compute type and, for addmm, bias epilogue (TF32 for Float only when
//     BACKPLANE_CUDA_ALLOW_TF32=1, for both);
//   - bp::add of one element, end to end (meta, allocation, dispatch, launch) and waited for,
//     next to a bare kernel launch and a stream synchronize.
// Every timed iteration ends with cudaDeviceSynchronize, which waits for the plugin's stream too.
// Without a CUDA device it prints why and exits with 77 (skipped). See bench/README.md.
#include "cuda_bench_kernel.h"

#include <backplane/backplane.h>

#include <benchmark/benchmark.h>

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

void check(cudaError_t error, const char* what) {
  if (error != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(error));
}

void check(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw std::runtime_error(std::string(what) + ": " + cublasLtGetStatusString(status));
  }
}

void wait_for_device() { check(cudaDeviceSynchronize(), "cudaDeviceSynchronize"); }

std::string dtype_label(bp::DType dtype) { return dtype == bp::kBFloat16 ? "bf16" : "f32"; }

// --- memory-bound ops ----------------------------------------------------------------------------

using Op = std::function<void()>;

// Values in [0, 1) made on the device (the host's random generator would take longer than the
// benchmarks on these sizes).
bp::Tensor device_values(const std::vector<int64_t>& sizes, bp::DType dtype, bp::Device device) {
  int64_t numel = 1;
  for (const int64_t size : sizes) numel *= size;
  return bp::arange(numel, bp::kFloat32, device).mul(1.0 / static_cast<double>(numel)).view(sizes).to(dtype);
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
      state, [&] { check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream), "cudaMemcpyAsync"); },
      2 * bytes);
  cudaFree(src);
  cudaFree(dst);
  cudaStreamDestroy(stream);
}

enum class Elementwise { Add, Mul, Relu, Gelu };

void BM_elementwise(benchmark::State& state, bp::Device device, Elementwise which, bp::DType dtype, int64_t n) {
  const bp::Tensor a = device_values({n}, dtype, device), b = device_values({n}, dtype, device);
  bp::Tensor out = bp::empty({n}, dtype, device);
  const auto element = static_cast<int64_t>(bp::element_size(dtype));
  switch (which) {
    case Elementwise::Add: return run_memory_bound(state, [&] { bp::add_out(out, a, b); }, 3 * n * element);
    case Elementwise::Mul: return run_memory_bound(state, [&] { bp::mul_out(out, a, b); }, 3 * n * element);
    case Elementwise::Relu: return run_memory_bound(state, [&] { bp::relu_out(out, a); }, 2 * n * element);
    case Elementwise::Gelu: return run_memory_bound(state, [&] { bp::gelu_out(out, a); }, 2 * n * element);
  }
}

enum class RowOp { Sum, Softmax, LayerNorm };

void BM_rows(benchmark::State& state, bp::Device device, RowOp which, bp::DType dtype, int64_t rows, int64_t cols) {
  const bp::Tensor x = device_values({rows, cols}, dtype, device);
  const bp::Tensor weight = device_values({cols}, dtype, device), bias = device_values({cols}, dtype, device);
  bp::Tensor out = bp::empty({rows, cols}, dtype, device);
  bp::Tensor sums = bp::empty({rows}, dtype, device);
  bp::Tensor mean = bp::empty({rows, 1}, dtype, device), rstd = bp::empty({rows, 1}, dtype, device);
  const int64_t bytes = rows * cols * static_cast<int64_t>(bp::element_size(dtype));
  switch (which) {
    case RowOp::Sum: return run_memory_bound(state, [&] { bp::sum_out(sums, x, {1}); }, bytes);
    case RowOp::Softmax: return run_memory_bound(state, [&] { bp::softmax_out(out, x, 1); }, 2 * bytes);
    case RowOp::LayerNorm:
      return run_memory_bound(
          state, [&] { bp::native_layer_norm_out(out, mean, rstd, x, {cols}, weight, bias, 1e-5); }, 2 * bytes);
  }
}

// --- matrix products -----------------------------------------------------------------------------

bool tf32_allowed() {
  const char* value = std::getenv("BACKPLANE_CUDA_ALLOW_TF32");
  return value != nullptr && std::strcmp(value, "1") == 0;
}

void report_flops(benchmark::State& state, int64_t n) {
  state.counters["TFLOP/s"] = benchmark::Counter(static_cast<double>(state.iterations()) * 2.0 * n * n * n / 1e12,
                                                 benchmark::Counter::kIsRate);
}

void BM_matmul(benchmark::State& state, bp::Device device, bp::DType dtype, int64_t n, bool with_bias) {
  const bp::Tensor a = device_values({n, n}, dtype, device), b = device_values({n, n}, dtype, device);
  const bp::Tensor bias = device_values({n}, dtype, device);
  bp::Tensor out = bp::empty({n, n}, dtype, device);
  run_memory_bound(state, [&] { with_bias ? bp::addmm_out(out, bias, a, b) : bp::mm_out(out, a, b); }, 0);
  report_flops(state, n);
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
    for (void** buffer : {&a_, &b_, &out_}) check(cudaMalloc(buffer, n * n * element), "cudaMalloc");
    check(cudaMalloc(&bias_, n * element), "cudaMalloc");
    check(cudaMemset(a_, 0, n * n * element), "cudaMemset");
    check(cudaMemset(b_, 0, n * n * element), "cudaMemset");
    check(cudaMemset(bias_, 0, n * element), "cudaMemset");
    check(cudaMalloc(&workspace_, kWorkspaceBytes), "cudaMalloc");
    check(cublasLtMatmulDescCreate(&desc_, compute, CUDA_R_32F), "cublasLtMatmulDescCreate");
    if (with_bias) {
      const cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_BIAS;
      check(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof epilogue), "bias");
      check(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias_, sizeof bias_), "bias");
    }
    check(cublasLtMatrixLayoutCreate(&layout_, type, n, n, n), "cublasLtMatrixLayoutCreate");
    cublasLtMatmulPreference_t preference = nullptr;
    check(cublasLtMatmulPreferenceCreate(&preference), "cublasLtMatmulPreferenceCreate");
    const uint64_t workspace = kWorkspaceBytes;
    check(cublasLtMatmulPreferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace,
                                               sizeof workspace),
          "workspace");
    int count = 0;
    check(cublasLtMatmulAlgoGetHeuristic(handle_, desc_, layout_, layout_, layout_, layout_, preference, 1, &algo_,
                                         &count),
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
    check(cublasLtMatmul(handle_, desc_, &alpha, b_, layout_, a_, layout_, &beta, out_, layout_, out_, layout_,
                         &algo_.algo, workspace_, kWorkspaceBytes, stream_),
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

void BM_reference_matmul(benchmark::State& state, bp::Device device, bp::DType dtype, int64_t n, bool with_bias) {
  check(cudaSetDevice(device.index()), "cudaSetDevice");
  ReferenceMatmul reference(dtype, n, with_bias);
  run_memory_bound(state, [&] { reference.run(); }, 0);
  report_flops(state, n);
}

// --- latency -------------------------------------------------------------------------------------

void BM_add_one_element(benchmark::State& state, bp::Device device) {
  const bp::Tensor a = bp::ones({1}, bp::kFloat32, device), b = bp::ones({1}, bp::kFloat32, device);
  for (auto _ : state) {
    bp::Tensor c = bp::add(a, b);
    wait_for_device();
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

void register_benchmarks(bp::Device device) {
  const std::string gpu = device.str();
  const int64_t elements = int64_t{64} << 20;
  for (const bp::DType dtype : {bp::kFloat32, bp::kBFloat16}) {
    const std::string type = dtype_label(dtype);
    const int64_t bytes = elements * static_cast<int64_t>(bp::element_size(dtype));
    benchmark::RegisterBenchmark(("memcpy 64M " + type + " (reference)/" + gpu).c_str(), BM_memcpy, device, bytes)
        ->UseRealTime();
    for (const auto& [which, name] : {std::pair{Elementwise::Add, "add"}, std::pair{Elementwise::Mul, "mul"},
                                      std::pair{Elementwise::Relu, "relu"}, std::pair{Elementwise::Gelu, "gelu"}}) {
      benchmark::RegisterBenchmark((std::string(name) + " 64M " + type + "/" + gpu).c_str(), BM_elementwise, device,
                                   which, dtype, elements)
          ->UseRealTime();
    }
    for (const auto& [rows, cols] : {std::pair<int64_t, int64_t>{8192, 8192}, {32768, 4096}}) {
      const std::string shape = std::to_string(rows) + "x" + std::to_string(cols) + " " + type;
      for (const auto& [which, name] : {std::pair{RowOp::Sum, "sum over rows"}, std::pair{RowOp::Softmax, "softmax"},
                                        std::pair{RowOp::LayerNorm, "layer_norm"}}) {
        benchmark::RegisterBenchmark((std::string(name) + " " + shape + "/" + gpu).c_str(), BM_rows, device, which,
                                     dtype, rows, cols)
            ->UseRealTime();
      }
    }
    for (const int64_t n : {int64_t{4096}, int64_t{8192}}) {
      const std::string size = std::to_string(n) + "^3 " + type;
      for (const bool with_bias : {false, true}) {
        const std::string op = with_bias ? "addmm " : "mm ";
        benchmark::RegisterBenchmark((op + size + "/" + gpu).c_str(), BM_matmul, device, dtype, n, with_bias)
            ->UseRealTime();
        benchmark::RegisterBenchmark((op + size + " cuBLASLt (reference)/" + gpu).c_str(), BM_reference_matmul,
                                     device, dtype, n, with_bias)
            ->UseRealTime();
      }
    }
  }
  benchmark::RegisterBenchmark(("add 1 element, end to end/" + gpu).c_str(), BM_add_one_element, device);
  benchmark::RegisterBenchmark(("bare kernel launch + synchronize (reference)/" + gpu).c_str(), BM_bare_launch,
                               device);
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
  register_benchmarks(gpus.front());
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
