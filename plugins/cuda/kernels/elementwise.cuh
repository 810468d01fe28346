// Elementwise kernels from one element function: out[i] = fn(in[i]...), with inputs read as
// their compute types and the result stored as the output's type.
//
// Dense launches (every operand's elements consecutive) walk the elements with 16-byte vector
// loads and stores when every pointer is aligned for them past a common scalar head, several
// vectors per thread loaded before any is used; other launches find each element's offsets
// through the launch's StridedShape (32-bit fast division unless the shape is huge).
//
// Launched through elementwise_launch.cuh; apart from it so that the host tests compile these
// kernels too (tests/cuda/emulated_launch.h).
#pragma once

#include "kernels/device_support.cuh"

#include <utility>

namespace bp::cuda {
// Internal to each includer: the kernel library and the host tests each compile their own (the
// host tests' copies would otherwise share names with nvcc's launch stubs of these kernels).
namespace {

inline constexpr int kElementwiseThreads = 256;
// Vectors each thread loads before computing: independent loads in flight hide latency. Two
// per operand, with two blocks per multiprocessor at least (launch bounds: at most 128
// registers, no spills), keep some 32 KB in flight per multiprocessor, more than the memory
// system's latency-bandwidth product needs; more would cost registers for no gain.
inline constexpr int kElementwiseUnroll = 2;
inline constexpr int kElementwiseMinBlocks = 2;

template <typename T, int V, int U>
struct Batch {
  Vec<T, V> v[U];
};

// Vectors base, base + stride, ... (U of them, those below count) of p viewed as Vec<T, V>.
template <int V, int U, typename T>
__device__ __forceinline__ Batch<T, V, U> load_batch(const T* __restrict__ p, int64_t base,
                                                     int64_t stride, int64_t count) {
  Batch<T, V, U> batch;
#pragma unroll
  for (int u = 0; u < U; ++u) {
    const int64_t i = base + u * stride;
    if (i < count) batch.v[u] = reinterpret_cast<const Vec<T, V>*>(p)[i];
  }
  return batch;
}

template <int V, int U, typename Out, typename Fn, typename... In>
__device__ __forceinline__ void store_batch(Out* out, const Fn& fn, int64_t base, int64_t stride,
                                            int64_t count, const Batch<In, V, U>&... in) {
#pragma unroll
  for (int u = 0; u < U; ++u) {
    const int64_t i = base + u * stride;
    if (i < count) {
      Vec<Out, V> result;
#pragma unroll
      for (int e = 0; e < V; ++e) result.v[e] = from_compute<Out>(fn(to_compute(in.v[u].v[e])...));
      reinterpret_cast<Vec<Out, V>*>(out)[i] = result;
    }
  }
}

// `count` vectors of V elements from each pointer, grid-stride. All loads of a batch are issued
// (as the arguments of store_batch) before its first store, so in-place operands stay correct.
template <int V, typename Out, typename Fn, typename... In>
__device__ __forceinline__ void dense_walk(int64_t count, const Fn& fn, Out* out, const In*... in) {
  const int64_t stride = grid_threads();
  for (int64_t base = global_thread(); base < count; base += stride * kElementwiseUnroll) {
    store_batch<V, kElementwiseUnroll>(
        out, fn, base, stride, count,
        load_batch<V, kElementwiseUnroll>(in, base, stride, count)...);
  }
}

// Blocks of kElementwiseThreads for elementwise_dense over n elements, V per vector.
template <int V>
unsigned int dense_blocks(int64_t n, const LaunchTarget& target) {
  return grid_blocks((n + V - 1) / V, int64_t{kElementwiseThreads} * kElementwiseUnroll, target);
}

template <typename Out, typename Fn, typename... In>
__global__ void __launch_bounds__(kElementwiseThreads, kElementwiseMinBlocks)
                                      elementwise_dense(int64_t n, Fn fn, Out* out,
                                                        const In*... in) {
  constexpr int V = kVectorWidth<Out, In...>;
  // Operands that start equally far from alignment (a slice like x[1:] + y[1:]) take a scalar
  // head up to it, then vectors.
  const int64_t to_alignment = elements_to_vector_alignment<V>(out);
  const int64_t head = to_alignment < n ? to_alignment : n;
  const bool aligned = is_vector_aligned<V>(out + head) && (is_vector_aligned<V>(in + head) && ...);
  if (aligned && V > 1) {
    dense_walk<1>(head, fn, out, in...);
    const int64_t vectors = (n - head) / V;
    dense_walk<V>(vectors, fn, out + head, (in + head)...);
    const int64_t done = head + vectors * V;
    dense_walk<1>(n - done, fn, out + done, (in + done)...);
  } else {
    dense_walk<1>(n, fn, out, in...);
  }
}

template <typename Out, typename Fn, typename... In, size_t... K>
__device__ __forceinline__ void strided_element(const int64_t (&at)[1 + sizeof...(In)],
                                                const Fn& fn, Out* out, std::index_sequence<K...>,
                                                const In*... in) {
  out[at[0]] = from_compute<Out>(fn(to_compute(in[at[K + 1]])...));
}

template <typename Out, typename Fn, typename... In>
__global__ void __launch_bounds__(kElementwiseThreads, kElementwiseMinBlocks)
                                      elementwise_strided(StridedShape<1 + sizeof...(In)> shape,
                                                          int64_t n, Fn fn, Out* out,
                                                          const In*... in) {
  for (int64_t i = global_thread(); i < n; i += grid_threads()) {
    int64_t at[1 + sizeof...(In)];
    shape.offsets(i, at);
    strided_element(at, fn, out, std::index_sequence_for<In...>{}, in...);
  }
}

}  // namespace
}  // namespace bp::cuda
