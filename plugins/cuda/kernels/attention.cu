// The fused attention kernel (attention_block.h) on the GPU: its Lane as PTX instructions.
#include "kernels/attention_block.h"
#include "kernels/groups.cuh"

#include <numbers>

namespace bp::cuda {
namespace {

constexpr std::string_view kOp = "_scaled_dot_product_fused_attention";

// The dtypes the tensor cores' mma.sync takes as 16-bit inputs.
constexpr plugin::DTypeSet kFusedDTypes = plugin::dtype_set({DType::Float16, DType::BFloat16});

__device__ __forceinline__ uint32_t shared_address(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// This thread's access to the warp's and the block's instructions, for inputs of type T.
template <typename T>
struct DeviceLane {
  __device__ int thread() const { return static_cast<int>(threadIdx.x); }

  // 16 bytes from device to shared memory without passing through registers; where !inside,
  // nothing is read and the 16 bytes become zeros.
  __device__ void copy_async(void* shared, const void* global, bool inside) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(shared_address(shared)),
                 "l"(__cvta_generic_to_global(global)), "r"(inside ? 16 : 0)
                 : "memory");
  }
  __device__ void commit_copies() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
  // Until only this thread's latest commit group may still be in flight.
  __device__ void wait_copies_but_latest() {
    asm volatile("cp.async.wait_group 1;\n" ::: "memory");
  }

  __device__ void sync_block() { __syncthreads(); }
  __device__ void sync_warp() { __syncwarp(); }

  // `row` is this lane's row address (see ldmatrix in attention_block.h).
  __device__ void load_matrices(uint32_t (&r)[4], const void* row) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(shared_address(row)));
  }
  __device__ void load_matrices_transposed(uint32_t (&r)[4], const void* row) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(shared_address(row)));
  }

  // d += a b for one m16n8k16 tile (layouts in attention_block.h).
  __device__ void multiply_accumulate(float (&d)[4], const uint32_t (&a)[4], uint32_t b0,
                                      uint32_t b1) {
    if constexpr (std::is_same_v<T, __half>) {
      asm volatile(
          "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
          "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
          : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
          : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    } else {
      static_assert(std::is_same_v<T, __nv_bfloat16>);
      asm volatile(
          "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
          "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
          : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
          : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    }
  }

  __device__ float shuffle_xor(float value, int lane_mask) const {
    return bp::cuda::shuffle_xor(value, lane_mask, kWarpSize);
  }

  // Two floats rounded to T and packed as one fragment register: `low` in the low half.
  __device__ uint32_t pack_pair(float low, float high) const {
    const T pair[2] = {from_compute<T>(low), from_compute<T>(high)};
    uint32_t bits;
    memcpy(&bits, pair, sizeof(bits));
    return bits;
  }

  __device__ void copy_vector(T* to, const T* from) const {
    using Vector = Vec<T, kVectorWidth<T>>;
    *reinterpret_cast<Vector*>(to) = *reinterpret_cast<const Vector*>(from);
  }
};

template <typename T, int HeadDim>
__global__ void __launch_bounds__(kAttentionThreads)
    fused_attention(AttentionShape shape, const T* __restrict__ query, const T* __restrict__ key,
                    const T* __restrict__ value, T* __restrict__ out, float scale_log2) {
  DeviceLane<T> lane;
  attend_query_block<T, HeadDim>(lane, shape, query, key, value, out, scale_log2, blockIdx.x,
                                 reinterpret_cast<T*>(dynamic_shared));
}

template <typename T, int HeadDim>
void launch_for_head_dim(const AttentionShape& shape, const void* const* data, double scale,
                         const LaunchTarget& target) {
  constexpr size_t kBytes = kAttentionSharedBytes<T, HeadDim>;
  const void* kernel = reinterpret_cast<const void*>(&fused_attention<T, HeadDim>);
  const size_t static_bytes = static_shared_memory(kernel, "fused_attention");
  if (kBytes + static_bytes > target.max_shared_memory) {
    throw plugin::Error(BP_STATUS_UNIMPLEMENTED,
                        std::string(kOp) + ": the fused kernel for head size " +
                            std::to_string(HeadDim) + " needs " +
                            std::to_string(kBytes + static_bytes) +
                            " bytes of shared memory per block, and this device allows " +
                            std::to_string(target.max_shared_memory));
  }
  const int64_t query_blocks =
      (shape.query_length + kAttentionQueryBlock - 1) / kAttentionQueryBlock;
  if (query_blocks > INT32_MAX / shape.batches) {
    throw plugin::Error(BP_STATUS_UNIMPLEMENTED,
                        std::string(kOp) + ": the fused kernel launches one block per " +
                            std::to_string(kAttentionQueryBlock) +
                            " query rows of each (batch, head, ...) index, at most " +
                            std::to_string(INT32_MAX) + ", and " + std::to_string(shape.batches) +
                            " indices of " + std::to_string(shape.query_length) +
                            " rows need more");
  }
  allow_shared_memory(kernel, kBytes, static_bytes, target.max_shared_memory, "fused_attention");
  const auto blocks = static_cast<unsigned int>(query_blocks * shape.batches);
  fused_attention<T, HeadDim><<<blocks, kAttentionThreads, kBytes, target.stream>>>(
      shape, static_cast<const T*>(data[kAttentionQuery]),
      static_cast<const T*>(data[kAttentionKey]), static_cast<const T*>(data[kAttentionValue]),
      static_cast<T*>(const_cast<void*>(data[kAttentionOut])),
      static_cast<float>(scale * std::numbers::log2e));
  check_launch("fused_attention");
}

}  // namespace

void launch_fused_attention(DType dtype, const AttentionShape& shape, const void* const* data,
                            double scale, const LaunchTarget& target) {
  if (shape.batches == 0 || shape.query_length == 0) return;
  using Kernel = kernel_dtypes::_scaled_dot_product_fused_attention_out;
  plugin::visit_dtype<Kernel, kFusedDTypes>(dtype, [&](auto tag) {
    using T = device_t<typename decltype(tag)::type>;
    switch (shape.head_dim) {
      case 64: return launch_for_head_dim<T, 64>(shape, data, scale, target);
      case 128: return launch_for_head_dim<T, 128>(shape, data, scale, target);
    }
    throw plugin::Error(BP_STATUS_UNIMPLEMENTED,
                        std::string(kOp) + ": the fused kernel takes head sizes 64 and 128, got " +
                            std::to_string(shape.head_dim));
  });
}

}  // namespace bp::cuda
