// Launches of the elementwise kernels (elementwise.cuh): launch_elementwise runs one element
// function over an ElementwiseLaunch, dense or strided.
#pragma once

#include "kernels/elementwise.cuh"

#include <utility>

namespace bp::cuda {

template <typename Out, typename... In, int N, size_t... K>
void launch_elementwise_with(const ElementwiseLaunch<N>& launch, const auto& fn,
                             std::index_sequence<K...>) {
  static_assert(N == 1 + sizeof...(In));
  if (launch.numel == 0) return;
  Out* out = static_cast<Out*>(launch.data[0]);
  const LaunchTarget& target = launch.target;
  if (launch.dense) {
    const unsigned int blocks = dense_blocks<kVectorWidth<Out, In...>>(launch.numel, target);
    elementwise_dense<<<blocks, kElementwiseThreads, 0, target.stream>>>(
        launch.numel, fn, out, static_cast<const In*>(launch.data[K + 1])...);
    check_launch("elementwise_dense");
  } else {
    const unsigned int blocks = grid_blocks(launch.numel, kElementwiseThreads, target);
    elementwise_strided<<<blocks, kElementwiseThreads, 0, target.stream>>>(
        launch.shape, launch.numel, fn, out, static_cast<const In*>(launch.data[K + 1])...);
    check_launch("elementwise_strided");
  }
}

// A launch's walk as a shape, for kernels that always take one: a dense launch is one
// dimension of stride 1.
template <int N>
StridedShape<N> shape_of(const ElementwiseLaunch<N>& launch) {
  if (!launch.dense) return launch.shape;
  StridedShape<N> shape;
  shape.ndim = 1;
  shape.wide = launch.numel > int64_t{UINT32_MAX};
  shape.sizes[0] = launch.numel;
  for (int k = 0; k < N; ++k) shape.strides[k][0] = 1;
  return shape;
}

// Runs fn over a launch whose operand 0 is of type Out and whose inputs are of types In.
template <typename Out, typename... In, int N>
void launch_elementwise(const ElementwiseLaunch<N>& launch, const auto& fn) {
  launch_elementwise_with<Out, In...>(launch, fn, std::index_sequence_for<In...>{});
}

}  // namespace bp::cuda
