#include "runtime/cudnn_conv.h"

#include "kernels/cuda_call.h"
#include "runtime/device_guard.h"
#include "runtime/environment.h"
#include "runtime/tensor_access.h"

#include <backplane/sdk/log.hpp>

#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstring>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
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
// A forward problem may run channels last: x, w and y then describe NHWC copies of the tensors
// in scratch memory, which the run makes and copies back.
struct Problem {
  TensorDesc x, y;
  FilterDesc w;
  ConvDesc conv;
  Algorithm algorithm;
  bool channels_last = false;
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

// cuDNN's descriptors take int sizes and positive int strides. A tensor whose farthest element
// lies past INT_MAX would need offsets beyond them too, and one expanded along a dim (stride 0)
// is refused as a bad parameter: rather than risk cuDNN refusing either with an error (or
// worse), such convolutions take the implicit-GEMM kernel.
bool fits_int(const Image& image) {
  int64_t last = 0;  // the farthest element's offset
  for (int d = 0; d < 4; ++d) {
    if (image.sizes[d] > INT_MAX || image.strides[d] > INT_MAX || image.strides[d] < 0)
      return false;
    if (image.strides[d] == 0 && image.sizes[d] > 1) return false;
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

TensorDesc tensor_desc(const Image& image, cudnnDataType_t type, bool channels_last) {
  cudnnTensorDescriptor_t raw = nullptr;
  check_cudnn(cudnnCreateTensorDescriptor(&raw), "describing a tensor");
  TensorDesc desc(raw);
  if (channels_last) {
    check_cudnn(cudnnSetTensor4dDescriptor(
                    raw, CUDNN_TENSOR_NHWC, type, static_cast<int>(image.sizes[0]),
                    static_cast<int>(image.sizes[1]), static_cast<int>(image.sizes[2]),
                    static_cast<int>(image.sizes[3])),
                "describing a tensor");
    return desc;
  }
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

// The descriptors of a problem, its math type the dtype's: of the tensors as they are, or of
// dense NHWC copies of them (`channels_last`).
Problem describe(DType dtype, const Image& input, const Image& weight, const Image& out,
                 const SlidingWindow& window, int64_t groups, bool channels_last = false) {
  const cudnnDataType_t type = data_type(dtype);
  Problem problem;
  problem.channels_last = channels_last;
  problem.x = tensor_desc(input, type, channels_last);
  problem.y = tensor_desc(out, type, channels_last);
  cudnnFilterDescriptor_t raw_filter = nullptr;
  check_cudnn(cudnnCreateFilterDescriptor(&raw_filter), "describing a filter");
  problem.w.reset(raw_filter);
  check_cudnn(cudnnSetFilter4dDescriptor(
                  raw_filter, type, channels_last ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW,
                  static_cast<int>(weight.sizes[0]), static_cast<int>(weight.sizes[1]),
                  static_cast<int>(weight.sizes[2]), static_cast<int>(weight.sizes[3])),
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

// Workspace cuDNN's algorithms may use while they are measured: as much as the hungriest of them
// asks for, up to a quarter of the device's memory; where that is not free, at most
// kSearchWorkspaceBytes; failing that, none (only the algorithms that need none are measured).
// An algorithm that needs more than the search had is not measured, and so not chosen.
constexpr size_t kSearchWorkspaceBytes = size_t{512} << 20;

size_t largest_workspace(cudnnHandle_t handle, ConvDirection direction, const Problem& problem) {
  size_t largest = 0, bytes = 0;
  // Takes the status of a query that wrote `bytes`: an algorithm that cannot run the problem
  // answers with an error, and is passed over.
  const auto consider = [&](cudnnStatus_t status) {
    if (status == CUDNN_STATUS_SUCCESS) largest = std::max(largest, bytes);
  };
  switch (direction) {
    case ConvDirection::Forward:
      for (int algo = 0; algo < CUDNN_CONVOLUTION_FWD_ALGO_COUNT; ++algo) {
        consider(cudnnGetConvolutionForwardWorkspaceSize(
            handle, problem.x.get(), problem.w.get(), problem.conv.get(), problem.y.get(),
            static_cast<cudnnConvolutionFwdAlgo_t>(algo), &bytes));
      }
      break;
    case ConvDirection::BackwardData:
      for (int algo = 0; algo < CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT; ++algo) {
        consider(cudnnGetConvolutionBackwardDataWorkspaceSize(
            handle, problem.w.get(), problem.y.get(), problem.conv.get(), problem.x.get(),
            static_cast<cudnnConvolutionBwdDataAlgo_t>(algo), &bytes));
      }
      break;
    case ConvDirection::BackwardFilter:
      for (int algo = 0; algo < CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT; ++algo) {
        consider(cudnnGetConvolutionBackwardFilterWorkspaceSize(
            handle, problem.x.get(), problem.y.get(), problem.conv.get(), problem.w.get(),
            static_cast<cudnnConvolutionBwdFilterAlgo_t>(algo), &bytes));
      }
      break;
  }
  return largest;
}

struct Workspace {
  void* data = nullptr;
  size_t bytes = 0;
};

Workspace search_workspace(Device& device, DeviceScratch& scratch, size_t wanted) {
  for (const size_t bytes : {std::min(wanted, static_cast<size_t>(device.total_memory() / 4)),
                             std::min(wanted, kSearchWorkspaceBytes)}) {
    if (bytes == 0) break;
    try {
      return {scratch.allocate(bytes), bytes};
    } catch (const plugin::Error& error) {
      if (error.code() != BP_STATUS_OUT_OF_MEMORY) throw;
    }
  }
  return {};
}

// The FFT and Winograd algorithms sum transformed terms, whose rounding departs from a direct
// sum's by more than the conformance tolerances of float32 and float64 allow.
bool transforms_terms(cudnnConvolutionFwdAlgo_t algo) {
  return algo == CUDNN_CONVOLUTION_FWD_ALGO_FFT || algo == CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING ||
         algo == CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD ||
         algo == CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED;
}
bool transforms_terms(cudnnConvolutionBwdDataAlgo_t algo) {
  return algo == CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT ||
         algo == CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT_TILING ||
         algo == CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD ||
         algo == CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD_NONFUSED;
}
bool transforms_terms(cudnnConvolutionBwdFilterAlgo_t algo) {
  return algo == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT ||
         algo == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT_TILING ||
         algo == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD_NONFUSED;
}

// The algorithms of cuDNN's measured results (sorted fastest first; those that could not run
// come last) that may be chosen, at most `most`: for the gradients, only deterministic ones, so
// that a training step gives the same result on every run; for float32 and float64 (`exact`),
// none that transforms its terms.
template <typename Perf>
std::vector<Algorithm> runnable(const Perf* results, int count, bool deterministic_only, bool exact,
                                size_t most) {
  std::vector<Algorithm> algorithms;
  for (int i = 0; i < count && algorithms.size() < most; ++i) {
    if (results[i].status != CUDNN_STATUS_SUCCESS) continue;
    if (deterministic_only && results[i].determinism != CUDNN_DETERMINISTIC) continue;
    if (exact && transforms_terms(results[i].algo)) continue;
    algorithms.push_back({static_cast<int>(results[i].algo), results[i].memory, results[i].mathType,
                          CUDNN_STATUS_SUCCESS});
  }
  return algorithms;
}

// The tensors of one run: `x`, `w` and `y` as the forward convolution names them, whichever of
// them the direction writes.
struct Operands {
  void* x;
  void* w;
  void* y;
};

// What cuDNN's search answered, and the fastest algorithms it measured that may be chosen.
struct Measured {
  cudnnStatus_t status = CUDNN_STATUS_SUCCESS;
  std::vector<Algorithm> algorithms;
};

// The fastest algorithms cuDNN measured on this problem (at most `most`), run on these very
// tensors (the written one holds their results, overwritten afterwards). Measured rather than
// taken from cuDNN's heuristic, whose first choice can be several times slower than the fastest.
Measured measured_algorithms(Device& device, cudnnHandle_t handle, ConvDirection direction,
                             DType dtype, const Problem& problem, const Operands& data,
                             size_t most) {
  const bool exact = dtype == DType::Float32 || dtype == DType::Float64;
  DeviceScratch scratch(device);
  const Workspace workspace =
      search_workspace(device, scratch, largest_workspace(handle, direction, problem));
  int count = 0;
  Measured measured;
  switch (direction) {
    case ConvDirection::Forward: {
      cudnnConvolutionFwdAlgoPerf_t results[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
      measured.status = cudnnFindConvolutionForwardAlgorithmEx(
          handle, problem.x.get(), data.x, problem.w.get(), data.w, problem.conv.get(),
          problem.y.get(), data.y, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &count, results,
          workspace.data, workspace.bytes);
      if (measured.status == CUDNN_STATUS_SUCCESS)
        measured.algorithms = runnable(results, count, false, exact, most);
      break;
    }
    case ConvDirection::BackwardData: {
      cudnnConvolutionBwdDataAlgoPerf_t results[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
      measured.status = cudnnFindConvolutionBackwardDataAlgorithmEx(
          handle, problem.w.get(), data.w, problem.y.get(), data.y, problem.conv.get(),
          problem.x.get(), data.x, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &count, results,
          workspace.data, workspace.bytes);
      if (measured.status == CUDNN_STATUS_SUCCESS)
        measured.algorithms = runnable(results, count, true, exact, most);
      break;
    }
    case ConvDirection::BackwardFilter: {
      cudnnConvolutionBwdFilterAlgoPerf_t results[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
      measured.status = cudnnFindConvolutionBackwardFilterAlgorithmEx(
          handle, problem.x.get(), data.x, problem.y.get(), data.y, problem.conv.get(),
          problem.w.get(), data.w, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &count, results,
          workspace.data, workspace.bytes);
      if (measured.status == CUDNN_STATUS_SUCCESS)
        measured.algorithms = runnable(results, count, true, exact, most);
      break;
    }
  }
  return measured;
}

// The math type `algorithm` was measured with (the descriptor's, or a compatible one), but never
// tensor-op math (TF32) for float32 unless BACKPLANE_CUDA_ALLOW_TF32 allows it.
void use_math_of(const Problem& problem, DType dtype, const Algorithm& algorithm) {
  const bool tf32_forbidden = dtype == DType::Float32 && !tf32_allowed();
  check_cudnn(cudnnSetConvolutionMathType(problem.conv.get(),
                                          tf32_forbidden ? CUDNN_FMA_MATH : algorithm.math),
              "describing a convolution");
}

// --- forward: the tensors as they are, or channels last
// -------------------------------------------

// A forward call: input and out as the caller has them, weight dense (NCHW).
struct ForwardCall {
  DType dtype;
  Image input, weight, out;
  const std::function<void(const Image&)>& write_bias;
};

// The fastest algorithms of each formulation that are timed against each other on a problem's
// first call.
constexpr size_t kForwardCandidates = 3;
constexpr int kTimedRuns = 3;

// Whether an image's H x W planes are dense rows, which the transposes take as one dim.
bool planes_dense(const Image& image) {
  return (image.sizes[3] == 1 || image.strides[3] == 1) &&
         (image.sizes[2] == 1 || image.strides[2] == image.sizes[3]);
}

// A dense NHWC image of `image`'s sizes at `data`.
Image channels_last_image(const Image& image, void* data) {
  Image nhwc = image;
  nhwc.data = data;
  const int64_t channels = image.sizes[1], width = image.sizes[3];
  nhwc.strides[0] = channels * image.sizes[2] * width;
  nhwc.strides[1] = 1;
  nhwc.strides[2] = width * channels;
  nhwc.strides[3] = channels;
  return nhwc;
}

size_t bytes_of(const Image& image, DType dtype) {
  return static_cast<size_t>(image.sizes[0] * image.sizes[1] * image.sizes[2] * image.sizes[3]) *
         element_size(dtype);
}

// cuDNN runs the channels-last formulation on copies that the transposes make: where the planes
// of input and out are dense, and the copies' offsets fit cuDNN's ints.
bool channels_last_fits(const ForwardCall& call) {
  return planes_dense(call.input) && planes_dense(call.out) &&
         fits_int(channels_last_image(call.input, nullptr)) &&
         fits_int(channels_last_image(call.out, nullptr));
}

// NCHW `from` (dense planes) into dense NHWC `to`: each image a C x (H * W) matrix, transposed.
void to_channels_last(Device& device, DType dtype, const Image& from, const Image& to) {
  TransposeShape shape;
  shape.batches = from.sizes[0];
  shape.rows = from.sizes[1];
  shape.cols = from.sizes[2] * from.sizes[3];
  shape.in_batch_stride = from.strides[0];
  shape.in_row_stride = from.strides[1];
  shape.out_batch_stride = to.strides[0];
  shape.out_row_stride = to.sizes[1];
  launch_transpose(element_size(dtype), from.data, to.data, shape, device.launch_target());
}

// Dense NHWC `from` into NCHW `to` (dense planes): each image an (H * W) x C matrix, transposed.
void from_channels_last(Device& device, DType dtype, const Image& from, const Image& to) {
  TransposeShape shape;
  shape.batches = from.sizes[0];
  shape.rows = from.sizes[2] * from.sizes[3];
  shape.cols = from.sizes[1];
  shape.in_batch_stride = from.strides[0];
  shape.in_row_stride = from.sizes[1];
  shape.out_batch_stride = to.strides[0];
  shape.out_row_stride = to.strides[1];
  launch_transpose(element_size(dtype), from.data, to.data, shape, device.launch_target());
}

// NHWC copies of a call's tensors in scratch memory; throws BP_STATUS_OUT_OF_MEMORY where they do
// not fit.
struct ChannelsLast {
  ChannelsLast(DeviceScratch& scratch, const ForwardCall& call)
      : x(channels_last_image(call.input, scratch.allocate(bytes_of(call.input, call.dtype)))),
        w(channels_last_image(call.weight, scratch.allocate(bytes_of(call.weight, call.dtype)))),
        y(channels_last_image(call.out, scratch.allocate(bytes_of(call.out, call.dtype)))) {}
  Image x, w, y;
};

// Queues one forward run of `algorithm` on `problem`: out = the convolution, plus the bias where
// the call has one; channels last, through NHWC copies. Throws BP_STATUS_OUT_OF_MEMORY, before
// queueing anything, where the copies or the algorithm's workspace do not fit.
cudnnStatus_t run_forward(Device& device, cudnnHandle_t handle, const Problem& problem,
                          const Algorithm& algorithm, const ForwardCall& call) {
  DeviceScratch scratch(device);
  std::optional<ChannelsLast> copies;
  if (problem.channels_last) copies.emplace(scratch, call);
  void* workspace = algorithm.memory > 0 ? scratch.allocate(algorithm.memory) : nullptr;
  const Image& x = copies ? copies->x : call.input;
  const Image& w = copies ? copies->w : call.weight;
  const Image& y = copies ? copies->y : call.out;
  if (copies) {
    to_channels_last(device, call.dtype, call.input, x);
    to_channels_last(device, call.dtype, call.weight, w);
  }
  // cuDNN blends y = alpha * conv + beta * y in float before it rounds to the dtype: with the
  // bias already in y and beta = 1, a 16-bit result is rounded once, not once for the
  // convolution and again for the bias. The transpose back moves bits unchanged.
  if (call.write_bias) call.write_bias(y);
  const double one = 1, beta = call.write_bias ? 1 : 0;
  const float one_f = 1, beta_f = static_cast<float>(beta);
  const bool scale64 = call.dtype == DType::Float64;
  const cudnnStatus_t status = cudnnConvolutionForward(
      handle, scale64 ? static_cast<const void*>(&one) : &one_f, problem.x.get(), x.data,
      problem.w.get(), w.data, problem.conv.get(),
      static_cast<cudnnConvolutionFwdAlgo_t>(algorithm.algo), workspace, algorithm.memory,
      scale64 ? static_cast<const void*>(&beta) : &beta_f, problem.y.get(), y.data);
  if (status == CUDNN_STATUS_SUCCESS && copies) from_channels_last(device, call.dtype, y, call.out);
  return status;
}

// Two events on the device's stream, for timing the candidates.
struct EventPair {
  EventPair() {
    check_cuda(cudaEventCreate(&start), "creating an event");
    const cudaError_t created = cudaEventCreate(&stop);
    if (created != cudaSuccess) cudaEventDestroy(start);
    check_cuda(created, "creating an event");
  }
  ~EventPair() {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
  }
  EventPair(const EventPair&) = delete;
  EventPair& operator=(const EventPair&) = delete;
  cudaEvent_t start = nullptr;
  cudaEvent_t stop = nullptr;
};

// The median time of kTimedRuns whole runs (copies, bias and convolution) of `algorithm` on
// `problem`, after one untimed, in milliseconds; negative where cuDNN declines it or its memory
// does not fit now.
float time_forward(Device& device, cudnnHandle_t handle, const Problem& problem,
                   const Algorithm& algorithm, const ForwardCall& call) {
  use_math_of(problem, call.dtype, algorithm);
  const EventPair events;
  cudaStream_t stream = device.stream();
  float times[kTimedRuns] = {};
  try {
    for (int run = -1; run < kTimedRuns; ++run) {
      check_cuda(cudaEventRecord(events.start, stream), "recording an event");
      const cudnnStatus_t status = run_forward(device, handle, problem, algorithm, call);
      if (declined(status)) return -1;
      check_cudnn(status, device.label() + ": timing cuDNN's convolution");
      check_cuda(cudaEventRecord(events.stop, stream), "recording an event");
      check_cuda(cudaEventSynchronize(events.stop), device.label() + ": timing a convolution");
      if (run >= 0) {
        check_cuda(cudaEventElapsedTime(&times[run], events.start, events.stop),
                   "reading an event's time");
      }
    }
  } catch (const plugin::Error& error) {
    if (error.code() != BP_STATUS_OUT_OF_MEMORY) throw;
    return -1;
  }
  std::sort(std::begin(times), std::end(times));
  return times[kTimedRuns / 2];
}

// The algorithms cuDNN measured fastest for the channels-last formulation, on NHWC copies of the
// call's tensors; none where it cannot run it, whatever its reason: the tensors as they are
// remain.
std::vector<Algorithm> channels_last_algorithms(Device& device, cudnnHandle_t handle,
                                                const Problem& problem, const ForwardCall& call) {
  DeviceScratch scratch(device);
  std::optional<ChannelsLast> copies;
  try {
    copies.emplace(scratch, call);
  } catch (const plugin::Error& error) {
    if (error.code() != BP_STATUS_OUT_OF_MEMORY) throw;
    return {};
  }
  to_channels_last(device, call.dtype, call.input, copies->x);
  to_channels_last(device, call.dtype, call.weight, copies->w);
  const Measured measured =
      measured_algorithms(device, handle, ConvDirection::Forward, call.dtype, problem,
                          {copies->x.data, copies->w.data, copies->y.data}, kForwardCandidates);
  if (measured.status != CUDNN_STATUS_SUCCESS) return {};
  return measured.algorithms;
}

const char* algorithm_name(int algo) {
  static constexpr const char* kNames[] = {
      "IMPLICIT_GEMM", "IMPLICIT_PRECOMP_GEMM", "GEMM", "DIRECT", "FFT", "FFT_TILING",
      "WINOGRAD",      "WINOGRAD_NONFUSED"};
  return algo >= 0 && algo < static_cast<int>(std::size(kNames)) ? kNames[algo] : "unknown";
}

// One way to run a forward problem, and how long it took on the first call.
struct Option {
  Problem* problem;
  Algorithm algorithm;
  float milliseconds = -1;
};

std::string describe_option(const Option& option) {
  char text[128];
  std::snprintf(text, sizeof text, "%s %s (%d), math %d, %.4f ms",
                option.problem->channels_last ? "NHWC" : "NCHW",
                algorithm_name(option.algorithm.algo), option.algorithm.algo,
                static_cast<int>(option.algorithm.math), option.milliseconds);
  return text;
}

// A forward problem's formulation and algorithm: cuDNN measures its algorithms on the tensors as
// they are and on NHWC copies (as BACKPLANE_CUDA_CONV_LAYOUT allows), and the fastest few of
// each are timed here as whole runs, copies and bias included, for the fastest overall. cuDNN's
// own order comes from one run of each algorithm, which moves between processes; its
// tensor-core kernels read NHWC on Hopper, where NCHW tensors are transposed inside cuDNN or
// take slower kernels. The result's algorithm has a status other than SUCCESS where none runs.
Problem choose_forward(Device& device, cudnnHandle_t handle, const ForwardCall& call,
                       const SlidingWindow& window, int64_t groups) {
  const ConvLayout layout = conv_layout();
  Problem nhwc, nchw;
  std::vector<Option> options;
  if (layout != ConvLayout::Nchw && channels_last_fits(call)) {
    nhwc = describe(call.dtype, call.input, call.weight, call.out, window, groups, true);
    for (const Algorithm& algorithm : channels_last_algorithms(device, handle, nhwc, call))
      options.push_back({&nhwc, algorithm});
  }
  if (layout != ConvLayout::Nhwc || options.empty()) {
    nchw = describe(call.dtype, call.input, call.weight, call.out, window, groups);
    const Measured measured =
        measured_algorithms(device, handle, ConvDirection::Forward, call.dtype, nchw,
                            {call.input.data, call.weight.data, call.out.data}, kForwardCandidates);
    if (!declined(measured.status)) {
      check_cudnn(measured.status, device.label() + ": measuring cuDNN's convolution algorithms");
    }
    for (const Algorithm& algorithm : measured.algorithms) options.push_back({&nchw, algorithm});
  }
  if (options.empty()) return nchw;  // its algorithm's status: NOT_SUPPORTED
  // Where no candidate could be timed (each declined, or short of memory now), the first of
  // cuDNN's order runs, and the call finds out why.
  const Option* chosen = &options.front();
  if (options.size() > 1) {
    for (Option& option : options) {
      option.milliseconds = time_forward(device, handle, *option.problem, option.algorithm, call);
      if (option.milliseconds >= 0 &&
          (chosen->milliseconds < 0 || option.milliseconds < chosen->milliseconds)) {
        chosen = &option;
      }
    }
  }
  std::string report = device.label() + ": conv2d input [" + std::to_string(call.input.sizes[0]);
  for (int d = 1; d < 4; ++d) report += ", " + std::to_string(call.input.sizes[d]);
  report += "] " + std::string(dtype_name(call.dtype)) + " runs " + describe_option(*chosen) +
            "; measured:";
  for (const Option& option : options) report += " " + describe_option(option) + ";";
  plugin::log_message(BP_LOG_INFO, report);
  Problem problem = std::move(*chosen->problem);
  problem.algorithm = chosen->algorithm;
  return problem;
}

// Queues one run of a gradient's chosen algorithm: written = the direction's result.
cudnnStatus_t run_backward(cudnnHandle_t handle, ConvDirection direction, DType dtype,
                           const Problem& problem, const Operands& data, void* workspace) {
  const Algorithm& chosen = problem.algorithm;
  const float one_f = 1, zero_f = 0;
  const double one = 1, zero = 0;
  const bool scale64 = dtype == DType::Float64;
  const void* alpha = scale64 ? static_cast<const void*>(&one) : &one_f;
  const void* beta = scale64 ? static_cast<const void*>(&zero) : &zero_f;
  if (direction == ConvDirection::BackwardData) {
    return cudnnConvolutionBackwardData(handle, alpha, problem.w.get(), data.w, problem.y.get(),
                                        data.y, problem.conv.get(),
                                        static_cast<cudnnConvolutionBwdDataAlgo_t>(chosen.algo),
                                        workspace, chosen.memory, beta, problem.x.get(), data.x);
  }
  return cudnnConvolutionBackwardFilter(handle, alpha, problem.x.get(), data.x, problem.y.get(),
                                        data.y, problem.conv.get(),
                                        static_cast<cudnnConvolutionBwdFilterAlgo_t>(chosen.algo),
                                        workspace, chosen.memory, beta, problem.w.get(), data.w);
}

}  // namespace

bool cudnn_convolution(Device& device, ConvDirection direction, DType dtype, const Image& input,
                       const Image& weight, const Image& out, const SlidingWindow& window,
                       int64_t groups, const std::function<void(const Image&)>& write_bias) {
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
  const ForwardCall call{dtype, input, weight, out, write_bias};

  std::lock_guard lock(context.mutex);
  check_cudnn(cudnnSetStream(context.handle, device.stream()), "setting cuDNN's stream");
  const std::vector<int64_t> key =
      problem_key(direction, dtype, input, weight, out, window, groups);
  auto found = context.problems.find(key);
  if (found == context.problems.end()) {
    Problem problem;
    if (direction == ConvDirection::Forward) {
      problem = choose_forward(device, context.handle, call, window, groups);
    } else {
      problem = describe(dtype, input, weight, out, window, groups);
      const Measured measured =
          measured_algorithms(device, context.handle, direction, dtype, problem, data, 1);
      if (!declined(measured.status)) {
        check_cudnn(measured.status, device.label() + ": measuring cuDNN's convolution algorithms");
      }
      if (!measured.algorithms.empty()) problem.algorithm = measured.algorithms.front();
    }
    if (problem.algorithm.status == CUDNN_STATUS_SUCCESS)
      use_math_of(problem, dtype, problem.algorithm);
    found = context.problems.emplace(key, std::move(problem)).first;
  }
  // Where cuDNN declines the chosen algorithm later on, the cache remembers that too.
  Problem& problem = found->second;
  Algorithm& algorithm = problem.algorithm;
  if (algorithm.status != CUDNN_STATUS_SUCCESS) return false;

  cudnnStatus_t ran = CUDNN_STATUS_SUCCESS;
  try {
    if (direction == ConvDirection::Forward) {
      ran = run_forward(device, context.handle, problem, algorithm, call);
    } else {
      // The workspace the algorithm took when it was measured, with the same math type; the
      // allocator's cache serves it again on every later call.
      DeviceScratch scratch(device);
      void* workspace = algorithm.memory > 0 ? scratch.allocate(algorithm.memory) : nullptr;
      ran = run_backward(context.handle, direction, dtype, problem, data, workspace);
    }
  } catch (const plugin::Error& error) {
    // The chosen algorithm needs more memory than is free now: the plugin's own kernels, which
    // need none, compute the same result.
    if (error.code() != BP_STATUS_OUT_OF_MEMORY) throw;
    return false;
  }
  if (declined(ran)) {
    algorithm.status = ran;
    return false;
  }
  check_cudnn(ran, device.label() + ": running cuDNN's convolution");
  if (direction == ConvDirection::Forward)
    device.count_cudnn_forward(algorithm.algo, problem.channels_last);
  return true;
}

}  // namespace bp::cuda
