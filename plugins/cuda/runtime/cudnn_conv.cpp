#include "runtime/cudnn_conv.h"

#include "runtime/device_guard.h"
#include "runtime/environment.h"
#include "runtime/tensor_access.h"

#include <cudnn.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace bp::cuda {
namespace {

void check_cudnn(cudnnStatus_t status, std::string_view action) {
  if (status == CUDNN_STATUS_SUCCESS) return;
  const bool out_of_memory = status == CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED ||
                             status == CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED;
  throw plugin::Error(out_of_memory ? BP_STATUS_OUT_OF_MEMORY : BP_STATUS_DEVICE_ERROR,
                      std::string(action) + ": cuDNN " + cudnnGetErrorString(status));
}

// cuDNN 9 declines a problem it has no kernel for (layout, shape, architecture, shared memory)
// with one of its NOT_SUPPORTED codes, before queueing anything: the implicit-GEMM kernel then
// computes the same convolution.
bool declined(cudnnStatus_t status) {
  return CUDNN_STATUS_CATEGORY(status) == CUDNN_STATUS_NOT_SUPPORTED;
}

template <typename Handle, cudnnStatus_t (*Destroy)(Handle)>
struct Destroyer {
  void operator()(Handle handle) const { Destroy(handle); }
};
using TensorDesc =
    std::unique_ptr<std::remove_pointer_t<cudnnTensorDescriptor_t>,
                    Destroyer<cudnnTensorDescriptor_t, cudnnDestroyTensorDescriptor>>;
using FilterDesc =
    std::unique_ptr<std::remove_pointer_t<cudnnFilterDescriptor_t>,
                    Destroyer<cudnnFilterDescriptor_t, cudnnDestroyFilterDescriptor>>;
using ConvDesc =
    std::unique_ptr<std::remove_pointer_t<cudnnConvolutionDescriptor_t>,
                    Destroyer<cudnnConvolutionDescriptor_t, cudnnDestroyConvolutionDescriptor>>;

// The algorithm chosen for one direction of a problem, whichever of cuDNN's three enums names
// it; a status other than SUCCESS where none can run.
struct Algorithm {
  int algo = 0;
  size_t memory = 0;
  cudnnMathType_t math = CUDNN_DEFAULT_MATH;
  cudnnStatus_t status = CUDNN_STATUS_NOT_SUPPORTED;
};

// A problem's descriptors, made once, and the algorithm chosen for it: a repeated convolution
// then hands cuDNN the descriptors it has seen, as an application that keeps its own does.
struct Problem {
  TensorDesc x, y;
  FilterDesc w;
  ConvDesc conv;
  Algorithm algorithm;
};

// One device's cuDNN handle and the problems it has met. Both live as long as the process.
struct Context {
  cudnnHandle_t handle = nullptr;
  std::mutex mutex;  // the handle's stream, and the problems
  std::map<std::vector<int64_t>, Problem> problems;
};

Context& context_of(Device& device) {
  static std::mutex mutex;
  static std::map<int, std::unique_ptr<Context>> contexts;
  std::lock_guard lock(mutex);
  std::unique_ptr<Context>& context = contexts[device.index()];
  if (!context) {
    auto made = std::make_unique<Context>();
    const DeviceGuard guard(device.index());
    check_cudnn(cudnnCreate(&made->handle), device.label() + ": creating a cuDNN handle");
    context = std::move(made);
  }
  return *context;
}

// cuDNN's type for each dtype conv2d declares; any other is refused as conv2d refuses it.
cudnnDataType_t data_type(DType dtype) {
  switch (dtype) {
    case DType::Float32: return CUDNN_DATA_FLOAT;
    case DType::Float64: return CUDNN_DATA_DOUBLE;
    case DType::Float16: return CUDNN_DATA_HALF;
    case DType::BFloat16: return CUDNN_DATA_BFLOAT16;
    default: break;
  }
  plugin::refuse_dtype<kernel_dtypes::conv2d_out>(kernel_dtypes::conv2d_out::dtypes, dtype);
}

// float32: exact FMA math unless TF32 is allowed; the 16-bit floats: tensor cores.
cudnnMathType_t math_type(DType dtype) {
  if (dtype == DType::Float16 || dtype == DType::BFloat16) return CUDNN_TENSOR_OP_MATH;
  if (dtype == DType::Float32 && tf32_allowed()) return CUDNN_DEFAULT_MATH;
  return CUDNN_FMA_MATH;
}

// cuDNN's descriptors take int sizes and strides. A tensor whose farthest element lies past
// INT_MAX would need offsets beyond them too: rather than risk cuDNN refusing it with an error
// (or worse), such convolutions take the implicit-GEMM kernel.
bool fits_int(const Image& image) {
  int64_t last = 0;  // the farthest element's offset
  for (int d = 0; d < 4; ++d) {
    if (image.sizes[d] > INT_MAX || image.strides[d] > INT_MAX || image.strides[d] < 0)
      return false;
    if (image.sizes[d] == 0) return true;
    last += (image.sizes[d] - 1) * image.strides[d];
  }
  return last < INT_MAX;
}

// The convolution's descriptor takes int paddings, strides and dilations as well; the meta
// step lets through any that int64 holds.
bool fits_int(const SlidingWindow& window) {
  for (int d = 0; d < 2; ++d) {
    if (window.padding[d] > INT_MAX || window.stride[d] > INT_MAX || window.dilation[d] > INT_MAX) {
      return false;
    }
  }
  return true;
}

bool is_empty(const Image& image) {
  return std::find(std::begin(image.sizes), std::end(image.sizes), 0) != std::end(image.sizes);
}

TensorDesc tensor_desc(const Image& image, cudnnDataType_t type) {
  cudnnTensorDescriptor_t raw = nullptr;
  check_cudnn(cudnnCreateTensorDescriptor(&raw), "describing a tensor");
  TensorDesc desc(raw);
  check_cudnn(cudnnSetTensor4dDescriptorEx(
                  raw, type, static_cast<int>(image.sizes[0]), static_cast<int>(image.sizes[1]),
                  static_cast<int>(image.sizes[2]), static_cast<int>(image.sizes[3]),
                  static_cast<int>(image.strides[0]), static_cast<int>(image.strides[1]),
                  static_cast<int>(image.strides[2]), static_cast<int>(image.strides[3])),
              "describing a tensor");
  return desc;
}

// Every property the heuristic looks at, pointer alignments included.
std::vector<int64_t> problem_key(ConvDirection direction, DType dtype, const Image& input,
                                 const Image& weight, const Image& out, const SlidingWindow& window,
                                 int64_t groups) {
  std::vector<int64_t> key = {static_cast<int64_t>(direction), static_cast<int64_t>(dtype), groups,
                              tf32_allowed()};
  for (const Image* image : {&input, &weight, &out}) {
    key.insert(key.end(), std::begin(image->sizes), std::end(image->sizes));
    key.insert(key.end(), std::begin(image->strides), std::end(image->strides));
    key.push_back(static_cast<int64_t>(reinterpret_cast<uintptr_t>(image->data) % 256));
  }
  for (int d = 0; d < 2; ++d)
    key.insert(key.end(), {window.stride[d], window.padding[d], window.dilation[d]});
  return key;
}

// The descriptors of a problem, its math type the dtype's.
Problem describe(DType dtype, const Image& input, const Image& weight, const Image& out,
                 const SlidingWindow& window, int64_t groups) {
  const cudnnDataType_t type = data_type(dtype);
  Problem problem;
  problem.x = tensor_desc(input, type);
  problem.y = tensor_desc(out, type);
  cudnnFilterDescriptor_t raw_filter = nullptr;
  check_cudnn(cudnnCreateFilterDescriptor(&raw_filter), "describing a filter");
  problem.w.reset(raw_filter);
  check_cudnn(cudnnSetFilter4dDescriptor(
                  raw_filter, type, CUDNN_TENSOR_NCHW, static_cast<int>(weight.sizes[0]),
                  static_cast<int>(weight.sizes[1]), static_cast<int>(weight.sizes[2]),
                  static_cast<int>(weight.sizes[3])),
              "describing a filter");
  cudnnConvolutionDescriptor_t raw_conv = nullptr;
  check_cudnn(cudnnCreateConvolutionDescriptor(&raw_conv), "describing a convolution");
  problem.conv.reset(raw_conv);
  const cudnnDataType_t compute = dtype == DType::Float64 ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
  check_cudnn(cudnnSetConvolution2dDescriptor(
                  raw_conv, static_cast<int>(window.padding[0]),
                  static_cast<int>(window.padding[1]), static_cast<int>(window.stride[0]),
                  static_cast<int>(window.stride[1]), static_cast<int>(window.dilation[0]),
                  static_cast<int>(window.dilation[1]), CUDNN_CROSS_CORRELATION, compute),
              "describing a convolution");
  check_cudnn(cudnnSetConvolutionGroupCount(raw_conv, static_cast<int>(groups)),
              "describing a convolution");
  check_cudnn(cudnnSetConvolutionMathType(raw_conv, math_type(dtype)), "describing a convolution");
  return problem;
}

// Workspace cuDNN's algorithms may use while they are measured; one that needs more is not
// measured, and so not chosen.
constexpr size_t kSearchWorkspaceBytes = size_t{512} << 20;

// The fastest of cuDNN's measured results (sorted fastest first; those that could not run come
// last) that may be chosen: for the gradients, only deterministic algorithms, so that a training
// step gives the same result on every run.
template <typename Perf>
Algorithm fastest_of(const Perf* results, int count, bool deterministic_only) {
  for (int i = 0; i < count; ++i) {
    if (results[i].status != CUDNN_STATUS_SUCCESS) continue;
    if (deterministic_only && results[i].determinism != CUDNN_DETERMINISTIC) continue;
    return {static_cast<int>(results[i].algo), results[i].memory, results[i].mathType,
            CUDNN_STATUS_SUCCESS};
  }
  return {};
}

// The tensors of one run: `x`, `w` and `y` as the forward convolution names them, whichever of
// them the direction writes.
struct Operands {
  void* x;
  void* w;
  void* y;
};

// The fastest algorithm cuDNN measured on this problem, run on these very tensors (the written
// one holds their results, overwritten afterwards), or one whose status is not SUCCESS where none
// ran. Measured rather than taken from cuDNN's heuristic, whose first choice can be several times
// slower than the fastest.
Algorithm fastest_algorithm(Device& device, cudnnHandle_t handle, ConvDirection direction,
                            const Problem& problem, const Operands& data) {
  DeviceScratch scratch(device);
  void* workspace = nullptr;
  size_t workspace_bytes = kSearchWorkspaceBytes;
  try {
    workspace = scratch.allocate(workspace_bytes);
  } catch (const plugin::Error& error) {
    // Too little free memory to measure the algorithms that want workspace: those that need
    // none are measured alone.
    if (error.code() != BP_STATUS_OUT_OF_MEMORY) throw;
    workspace_bytes = 0;
  }
  check_cudnn(cudnnSetStream(handle, device.stream()), "setting cuDNN's stream");
  int count = 0;
  cudnnStatus_t status = CUDNN_STATUS_SUCCESS;
  Algorithm chosen;
  switch (direction) {
    case ConvDirection::Forward: {
      cudnnConvolutionFwdAlgoPerf_t results[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
      status = cudnnFindConvolutionForwardAlgorithmEx(
          handle, problem.x.get(), data.x, problem.w.get(), data.w, problem.conv.get(),
          problem.y.get(), data.y, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &count, results, workspace,
          workspace_bytes);
      if (status == CUDNN_STATUS_SUCCESS) chosen = fastest_of(results, count, false);
      break;
    }
    case ConvDirection::BackwardData: {
      cudnnConvolutionBwdDataAlgoPerf_t results[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
      status = cudnnFindConvolutionBackwardDataAlgorithmEx(
          handle, problem.w.get(), data.w, problem.y.get(), data.y, problem.conv.get(),
          problem.x.get(), data.x, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &count, results,
          workspace, workspace_bytes);
      if (status == CUDNN_STATUS_SUCCESS) chosen = fastest_of(results, count, true);
      break;
    }
    case ConvDirection::BackwardFilter: {
      cudnnConvolutionBwdFilterAlgoPerf_t results[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
      status = cudnnFindConvolutionBackwardFilterAlgorithmEx(
          handle, problem.x.get(), data.x, problem.y.get(), data.y, problem.conv.get(),
          problem.w.get(), data.w, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &count, results,
          workspace, workspace_bytes);
      if (status == CUDNN_STATUS_SUCCESS) chosen = fastest_of(results, count, true);
      break;
    }
  }
  if (declined(status)) return {};
  check_cudnn(status, device.label() + ": measuring cuDNN's convolution algorithms");
  return chosen;
}

// Queues one run of the chosen algorithm: written = alpha * the direction's result + beta *
// written.
cudnnStatus_t run(cudnnHandle_t handle, ConvDirection direction, const Problem& problem,
                  const Operands& data, void* workspace, const void* alpha, const void* beta) {
  const Algorithm& chosen = problem.algorithm;
  switch (direction) {
    case ConvDirection::Forward:
      return cudnnConvolutionForward(handle, alpha, problem.x.get(), data.x, problem.w.get(),
                                     data.w, problem.conv.get(),
                                     static_cast<cudnnConvolutionFwdAlgo_t>(chosen.algo), workspace,
                                     chosen.memory, beta, problem.y.get(), data.y);
    case ConvDirection::BackwardData:
      return cudnnConvolutionBackwardData(handle, alpha, problem.w.get(), data.w, problem.y.get(),
                                          data.y, problem.conv.get(),
                                          static_cast<cudnnConvolutionBwdDataAlgo_t>(chosen.algo),
                                          workspace, chosen.memory, beta, problem.x.get(), data.x);
    case ConvDirection::BackwardFilter:
      return cudnnConvolutionBackwardFilter(
          handle, alpha, problem.x.get(), data.x, problem.y.get(), data.y, problem.conv.get(),
          static_cast<cudnnConvolutionBwdFilterAlgo_t>(chosen.algo), workspace, chosen.memory, beta,
          problem.w.get(), data.w);
  }
  return CUDNN_STATUS_BAD_PARAM;
}

}  // namespace

bool cudnn_convolution(Device& device, ConvDirection direction, DType dtype, const Image& input,
                       const Image& weight, const Image& out, const SlidingWindow& window,
                       int64_t groups, const std::function<void()>& write_bias) {
  // cuDNN refuses empty operands (no input channels, or an empty batch), or worse, leaves its
  // result unwritten; the plugin's own kernels write the zeros of an empty sum.
  if (is_empty(input) || is_empty(weight) || is_empty(out)) return false;
  if (!fits_int(input) || !fits_int(weight) || !fits_int(out) || !fits_int(window) ||
      groups > INT_MAX) {
    return false;
  }
  Context& context = context_of(device);
  const DeviceGuard guard(device.index());
  const Operands data{input.data, weight.data, out.data};

  std::lock_guard lock(context.mutex);
  const std::vector<int64_t> key =
      problem_key(direction, dtype, input, weight, out, window, groups);
  auto found = context.problems.find(key);
  if (found == context.problems.end()) {
    Problem problem = describe(dtype, input, weight, out, window, groups);
    problem.algorithm = fastest_algorithm(device, context.handle, direction, problem, data);
    if (problem.algorithm.status == CUDNN_STATUS_SUCCESS) {
      // The math type the algorithm was measured with (the descriptor's, or a compatible one),
      // but never tensor-op math (TF32) for float32 unless BACKPLANE_CUDA_ALLOW_TF32 allows it.
      const bool tf32_forbidden = dtype == DType::Float32 && !tf32_allowed();
      check_cudnn(cudnnSetConvolutionMathType(
                      problem.conv.get(), tf32_forbidden ? CUDNN_FMA_MATH : problem.algorithm.math),
                  "describing a convolution");
    }
    found = context.problems.emplace(key, std::move(problem)).first;
  }
  // Where cuDNN declines the chosen algorithm later on, the cache remembers that too.
  Problem& problem = found->second;
  Algorithm& algorithm = problem.algorithm;
  if (algorithm.status != CUDNN_STATUS_SUCCESS) return false;

  // The workspace the algorithm took when it was measured, with the same math type.
  DeviceScratch scratch(device);
  void* workspace = nullptr;
  if (algorithm.memory > 0) {
    try {
      workspace = scratch.allocate(algorithm.memory);
    } catch (const plugin::Error& error) {
      // The chosen algorithm needs more memory than is free now: the plugin's own kernels,
      // which need none, compute the same result.
      if (error.code() != BP_STATUS_OUT_OF_MEMORY) throw;
      return false;
    }
  }
  check_cudnn(cudnnSetStream(context.handle, device.stream()), "setting cuDNN's stream");
  // cuDNN blends out = alpha * conv + beta * out in float before it rounds to the dtype: with the
  // bias already in out and beta = 1, a 16-bit result is rounded once, not once for the
  // convolution and again for the bias.
  if (write_bias) write_bias();
  const double one = 1, beta = write_bias ? 1 : 0;
  const float one_f = 1, beta_f = static_cast<float>(beta);
  const bool scale64 = dtype == DType::Float64;
  const cudnnStatus_t ran = run(context.handle, direction, problem, data, workspace,
                                scale64 ? static_cast<const void*>(&one) : &one_f,
                                scale64 ? static_cast<const void*>(&beta) : &beta_f);
  if (declined(ran)) {
    algorithm.status = ran;
    return false;
  }
  check_cudnn(ran, device.label() + ": running cuDNN's convolution");
  return true;
}

}  // namespace bp::cuda
