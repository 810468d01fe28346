// Floating-point matrix products through cuBLASLt on one device: a handle, a workspace from the
// device's allocator, and the algorithm cuBLASLt's heuristic picked for each problem, kept so
// that a repeated product skips the search. Float32 products use TF32 tensor cores only when
// BACKPLANE_CUDA_ALLOW_TF32=1; Half and BFloat16 accumulate in float.
#pragma once

#include "runtime/device_allocator.h"

#include <backplane/sdk/dtype.hpp>

#include <cublasLt.h>

#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>

namespace bp::cuda {

// A stored matrix as cuBLASLt reads it: column-major, `rows` x `cols` with leading dimension
// `ld` (at least rows), used as is or transposed; `batch_stride` elements apart from one batch
// to the next.
struct BlasMatrix {
  const void* data = nullptr;
  uint64_t rows = 0;
  uint64_t cols = 0;
  int64_t ld = 1;
  int64_t batch_stride = 0;
  bool transposed = false;  // A and B only
};

// What cuBLASLt's epilogue applies to each element of D last. Only ReLU: cuBLASLt's GELU epilogue
// is not the tanh formula the other backends compute (see plugins/cuda/README.md), so the plugin
// applies GELU in a pass of its own.
enum class BlasActivation { None, Relu };

// D = activation(alpha * op(A) @ op(B) + beta * D) for each of `batches` products, plus, with a
// bias, the bias vector (one element per row of D, unscaled) added to every column before the
// activation. With beta == 0, D is not read.
struct BlasProduct {
  DType dtype = DType::Float32;
  int64_t batches = 1;
  BlasMatrix a;
  BlasMatrix b;
  BlasMatrix d;
  double alpha = 1;
  double beta = 0;
  const void* bias = nullptr;
  BlasActivation activation = BlasActivation::None;
};

class Blas {
 public:
  Blas(int device, std::string label, DeviceAllocator& allocator);
  ~Blas();
  Blas(const Blas&) = delete;
  Blas& operator=(const Blas&) = delete;

  // Queues the product on `stream` (Float32, Float64, Float16 or BFloat16). Returns false when
  // cuBLASLt has no algorithm for it (a bias or activation it cannot fuse for this dtype, say);
  // throws
  // bp::plugin::Error on failures.
  bool try_multiply(const BlasProduct& product, cudaStream_t stream);

  // Bytes of the workspace cuBLASLt may use.
  static constexpr size_t kWorkspaceBytes = size_t{32} << 20;

 private:
  const int device_;
  const std::string label_;
  DeviceAllocator& allocator_;
  cublasLtHandle_t handle_ = nullptr;
  void* workspace_ = nullptr;
  std::mutex mutex_;
  // By a key of every property the heuristic looks at; a missing algorithm is cached too.
  std::unordered_map<std::string, cublasLtMatmulHeuristicResult_t> algorithms_;
};

}  // namespace bp::cuda
