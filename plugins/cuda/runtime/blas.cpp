#include "runtime/blas.h"

#include "kernels/cuda_call.h"
#include "runtime/device_guard.h"
#include "runtime/environment.h"

#include <bit>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>

namespace bp::cuda {
namespace {

void check_cublas(cublasStatus_t status, std::string_view action) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  const bp_status code = status == CUBLAS_STATUS_ALLOC_FAILED    ? BP_STATUS_OUT_OF_MEMORY
                         : status == CUBLAS_STATUS_NOT_SUPPORTED ? BP_STATUS_UNIMPLEMENTED
                                                                 : BP_STATUS_DEVICE_ERROR;
  throw plugin::Error(code, std::string(action) + ": cuBLASLt " + cublasLtGetStatusName(status) +
                                " (" + cublasLtGetStatusString(status) + ")");
}

struct Types {
  cudaDataType_t data;
  cublasComputeType_t compute;
  cudaDataType_t scale;
};

Types types_of(DType dtype) {
  switch (dtype) {
    case DType::Float32:
      return {CUDA_R_32F, tf32_allowed() ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F,
              CUDA_R_32F};
    case DType::Float64: return {CUDA_R_64F, CUBLAS_COMPUTE_64F, CUDA_R_64F};
    case DType::Float16: return {CUDA_R_16F, CUBLAS_COMPUTE_32F, CUDA_R_32F};
    case DType::BFloat16: return {CUDA_R_16BF, CUBLAS_COMPUTE_32F, CUDA_R_32F};
    default: break;
  }
  throw plugin::Error(BP_STATUS_INTERNAL, "cuBLASLt products take floating dtypes, not " +
                                              std::string(dtype_name(dtype)));
}

// The largest power of two (up to the 256 cuBLASLt asks for by default) dividing the address.
uint32_t alignment_of(const void* p) {
  const auto address = reinterpret_cast<uintptr_t>(p);
  if (address == 0) return 256;
  return static_cast<uint32_t>(std::min<uintptr_t>(uintptr_t{1} << std::countr_zero(address), 256));
}

template <typename T>
void append_bytes(std::string& key, const T& value) {
  static_assert(std::is_trivially_copyable_v<T>);
  key.append(reinterpret_cast<const char*>(&value), sizeof value);
}

struct LayoutDeleter {
  void operator()(cublasLtMatrixLayout_t layout) const { cublasLtMatrixLayoutDestroy(layout); }
};
struct DescDeleter {
  void operator()(cublasLtMatmulDesc_t desc) const { cublasLtMatmulDescDestroy(desc); }
};
struct PreferenceDeleter {
  void operator()(cublasLtMatmulPreference_t preference) const {
    cublasLtMatmulPreferenceDestroy(preference);
  }
};
using Layout = std::unique_ptr<std::remove_pointer_t<cublasLtMatrixLayout_t>, LayoutDeleter>;
using Desc = std::unique_ptr<std::remove_pointer_t<cublasLtMatmulDesc_t>, DescDeleter>;
using Preference =
    std::unique_ptr<std::remove_pointer_t<cublasLtMatmulPreference_t>, PreferenceDeleter>;

Layout matrix_layout(const BlasMatrix& matrix, cudaDataType_t type, int64_t batches) {
  cublasLtMatrixLayout_t layout = nullptr;
  check_cublas(cublasLtMatrixLayoutCreate(&layout, type, matrix.rows, matrix.cols, matrix.ld),
               "describing a matrix");
  Layout owned(layout);
  if (batches > 1) {
    const auto count = static_cast<int32_t>(batches);
    check_cublas(cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
                                                  &count, sizeof count),
                 "describing a batch");
    check_cublas(cublasLtMatrixLayoutSetAttribute(layout,
                                                  CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                                  &matrix.batch_stride, sizeof matrix.batch_stride),
                 "describing a batch");
  }
  return owned;
}

template <typename T>
void set_desc(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attribute, const T& value) {
  check_cublas(cublasLtMatmulDescSetAttribute(desc, attribute, &value, sizeof value),
               "describing a product");
}

template <typename T>
void set_preference(cublasLtMatmulPreference_t preference,
                    cublasLtMatmulPreferenceAttributes_t attribute, const T& value) {
  check_cublas(cublasLtMatmulPreferenceSetAttribute(preference, attribute, &value, sizeof value),
               "describing a product");
}

// cuBLASLt's epilogue for a bias, an activation, both or neither.
cublasLtEpilogue_t epilogue_of(const BlasProduct& product) {
  const bool bias = product.bias != nullptr;
  switch (product.activation) {
    case BlasActivation::None: return bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
    case BlasActivation::Relu: return bias ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU;
  }
  return CUBLASLT_EPILOGUE_DEFAULT;
}

}  // namespace

Blas::Blas(int device, std::string label, DeviceAllocator& allocator)
    : device_(device), label_(std::move(label)), allocator_(allocator) {
  const DeviceGuard guard(device_);
  check_cublas(cublasLtCreate(&handle_), label_ + ": creating a cuBLASLt handle");
  try {
    workspace_ = allocator_.allocate(kWorkspaceBytes);
  } catch (...) {
    cublasLtDestroy(handle_);
    throw;
  }
}

Blas::~Blas() {
  try {
    allocator_.release(workspace_);
  } catch (...) {  // the allocator handed it out, so this does not happen
  }
  cublasLtDestroy(handle_);
}

bool Blas::try_multiply(const BlasProduct& product, cudaStream_t stream) {
  if (product.batches > INT32_MAX) {
    throw plugin::Error(BP_STATUS_UNIMPLEMENTED,
                        label_ + ": cuBLASLt takes at most 2^31 - 1 batches, got " +
                            std::to_string(product.batches));
  }
  const Types types = types_of(product.dtype);
  const DeviceGuard guard(device_);

  cublasLtMatmulDesc_t raw_desc = nullptr;
  check_cublas(cublasLtMatmulDescCreate(&raw_desc, types.compute, types.scale),
               "describing a product");
  const Desc desc(raw_desc);
  const int32_t transa = product.a.transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int32_t transb = product.b.transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  set_desc(raw_desc, CUBLASLT_MATMUL_DESC_TRANSA, transa);
  set_desc(raw_desc, CUBLASLT_MATMUL_DESC_TRANSB, transb);
  const cublasLtEpilogue_t epilogue = epilogue_of(product);
  if (epilogue != CUBLASLT_EPILOGUE_DEFAULT) {
    set_desc(raw_desc, CUBLASLT_MATMUL_DESC_EPILOGUE, static_cast<uint32_t>(epilogue));
  }
  if (product.bias) set_desc(raw_desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, product.bias);
  const Layout a = matrix_layout(product.a, types.data, product.batches);
  const Layout b = matrix_layout(product.b, types.data, product.batches);
  const Layout d = matrix_layout(product.d, types.data, product.batches);

  std::string key;
  append_bytes(key, product.dtype);
  append_bytes(key, types.compute);
  append_bytes(key, product.batches);
  for (const BlasMatrix* m : {&product.a, &product.b, &product.d}) {
    append_bytes(key, m->rows);
    append_bytes(key, m->cols);
    append_bytes(key, m->ld);
    append_bytes(key, m->batch_stride);
    append_bytes(key, m->transposed);
    append_bytes(key, alignment_of(m->data));
  }
  append_bytes(key, product.beta != 0);
  append_bytes(key, epilogue);
  append_bytes(key, alignment_of(product.bias));

  cublasLtMatmulHeuristicResult_t chosen{};
  {
    std::lock_guard lock(mutex_);
    auto found = algorithms_.find(key);
    if (found == algorithms_.end()) {
      cublasLtMatmulPreference_t raw_preference = nullptr;
      check_cublas(cublasLtMatmulPreferenceCreate(&raw_preference), "describing a product");
      const Preference preference(raw_preference);
      set_preference(raw_preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                     uint64_t{kWorkspaceBytes});
      set_preference(raw_preference, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES,
                     alignment_of(product.a.data));
      set_preference(raw_preference, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                     alignment_of(product.b.data));
      set_preference(raw_preference, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES,
                     alignment_of(product.d.data));
      set_preference(raw_preference, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES,
                     alignment_of(product.d.data));
      cublasLtMatmulHeuristicResult_t result{};
      int count = 0;
      const cublasStatus_t status =
          cublasLtMatmulAlgoGetHeuristic(handle_, raw_desc, a.get(), b.get(), d.get(), d.get(),
                                         raw_preference, 1, &result, &count);
      // With an epilogue, any refusal counts as no algorithm: the caller then runs the plain
      // product and the bias or activation after it. cuBLASLt does not say which status it
      // refuses an epilogue with for a dtype (float64, say) that has none.
      const bool declined =
          status == CUBLAS_STATUS_NOT_SUPPORTED || epilogue != CUBLASLT_EPILOGUE_DEFAULT;
      if (!declined) check_cublas(status, label_ + ": choosing a cuBLASLt algorithm");
      if (status != CUBLAS_STATUS_SUCCESS || count == 0) result.state = CUBLAS_STATUS_NOT_SUPPORTED;
      found = algorithms_.emplace(std::move(key), result).first;
    }
    chosen = found->second;
  }
  if (chosen.state != CUBLAS_STATUS_SUCCESS) return false;

  const float alpha32 = static_cast<float>(product.alpha),
              beta32 = static_cast<float>(product.beta);
  const bool scale64 = types.scale == CUDA_R_64F;
  const void* alpha = scale64 ? static_cast<const void*>(&product.alpha) : &alpha32;
  const void* beta = scale64 ? static_cast<const void*>(&product.beta) : &beta32;
  check_cublas(cublasLtMatmul(handle_, raw_desc, alpha, product.a.data, a.get(), product.b.data,
                              b.get(), beta, product.d.data, d.get(),
                              const_cast<void*>(product.d.data), d.get(), &chosen.algo, workspace_,
                              kWorkspaceBytes, stream),
               label_ + ": cublasLtMatmul");
  return true;
}

}  // namespace bp::cuda
