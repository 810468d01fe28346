// Copies, conversions, fills and arange. Same-dtype copies and fills move bits (one kernel per
// element width); conversions between the float types that mixed precision uses most have
// their own dense kernels, and every other pair shares one kernel that reads and writes by the
// dtypes given at run time.
//
// Launched by copy.cu; a header so that the host tests compile these kernels too
// (tests/cuda/emulated_launch.h).
#pragma once

#include "kernels/elementwise.cuh"

namespace bp::cuda {
// Internal to each includer: the kernel library and the host tests each compile their own.
namespace {

struct Identity {
  template <typename C>
  __device__ C operator()(C value) const {
    return value;
  }
};

template <typename Bits>
struct Constant {
  Bits bits;
  __device__ Bits operator()() const { return bits; }
};

// One element's value on its way between two dtypes: integers stay integers (int64 holds every
// integer dtype exactly) and floating values become double (which holds every float exactly).
struct Number {
  double real;
  int64_t integer;
  bool is_real;
};

template <typename T>
__device__ __forceinline__ Number number_of(T value) {
  const compute_t<T> v = to_compute(value);
  if constexpr (std::is_floating_point_v<compute_t<T>>) {
    return {static_cast<double>(v), 0, true};
  } else {
    return {0.0, static_cast<int64_t>(v), false};
  }
}

template <typename T>
__device__ __forceinline__ Number load_as_number(const void* data, int64_t offset) {
  return number_of(static_cast<const T*>(data)[offset]);
}

template <typename T>
__device__ __forceinline__ void store_number(void* data, int64_t offset, const Number& n) {
  static_cast<T*>(data)[offset] = n.is_real ? from_compute<T>(n.real) : from_compute<T>(n.integer);
}

__device__ Number load_number(const void* data, int64_t offset, DType dtype) {
  switch (dtype) {
    case DType::Float32: return load_as_number<float>(data, offset);
    case DType::Float64: return load_as_number<double>(data, offset);
    case DType::Float16: return load_as_number<__half>(data, offset);
    case DType::BFloat16: return load_as_number<__nv_bfloat16>(data, offset);
    case DType::Int8: return load_as_number<int8_t>(data, offset);
    case DType::UInt8: return load_as_number<uint8_t>(data, offset);
    case DType::Int32: return load_as_number<int32_t>(data, offset);
    case DType::Int64: return load_as_number<int64_t>(data, offset);
    case DType::Bool: return load_as_number<bool>(data, offset);
  }
  return {};
}

__device__ void store_number(void* data, int64_t offset, DType dtype, const Number& n) {
  switch (dtype) {
    case DType::Float32: return store_number<float>(data, offset, n);
    case DType::Float64: return store_number<double>(data, offset, n);
    case DType::Float16: return store_number<__half>(data, offset, n);
    case DType::BFloat16: return store_number<__nv_bfloat16>(data, offset, n);
    case DType::Int8: return store_number<int8_t>(data, offset, n);
    case DType::UInt8: return store_number<uint8_t>(data, offset, n);
    case DType::Int32: return store_number<int32_t>(data, offset, n);
    case DType::Int64: return store_number<int64_t>(data, offset, n);
    case DType::Bool: return store_number<bool>(data, offset, n);
  }
}

__global__ void __launch_bounds__(kElementwiseThreads, kElementwiseMinBlocks)
                                      convert_any(StridedShape<2> shape, int64_t n, void* dst,
                                                  DType to, const void* src, DType from) {
  for (int64_t i = global_thread(); i < n; i += grid_threads()) {
    int64_t at[2];
    shape.offsets(i, at);
    store_number(dst, at[0], to, load_number(src, at[1], from));
  }
}

// x * y rounded on its own. nvcc fuses a product and the sum that follows into one FMA, whose
// single rounding differs in the last bit for about a quarter of arange(0.1, ..., 0.3)'s values
// from the two roundings the CPU backend makes.
__device__ __forceinline__ double unfused_product(double x, double y) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(x, y);
#else
  return x * y;  // the host compiler contracts nothing in ISO C++
#endif
}
__device__ __forceinline__ int64_t unfused_product(int64_t x, int64_t y) { return x * y; }

template <typename T, typename Value>
__global__ void __launch_bounds__(kElementwiseThreads, kElementwiseMinBlocks)
                                      arange_kernel(T* out, int64_t count, int64_t stride,
                                                    Value start, Value step) {
  for (int64_t i = global_thread(); i < count; i += grid_threads()) {
    out[i * stride] = from_compute<T>(start + unfused_product(static_cast<Value>(i), step));
  }
}

}  // namespace
}  // namespace bp::cuda
