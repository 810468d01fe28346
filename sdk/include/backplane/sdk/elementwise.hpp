// Elementwise loops over strided views for host-addressable devices. The core hands kernels
// inputs already broadcast to the output's shape, so every view here has the output's sizes,
// with arbitrary strides (0 for broadcast dimensions).
#pragma once

#include <backplane/sdk/status.hpp>
#include <backplane/sdk/tensor_view.hpp>

#include <array>
#include <cstdint>
#include <cstddef>
#include <string>
#include <utility>

namespace bp::plugin {

// Calls body(offsets) once per element of `views[0]`'s shape, where offsets[k] is the element
// offset of that element in views[k]. The innermost dimension runs as a plain loop.
template <size_t N, typename Body>
void for_each_offset(const std::array<const TensorView*, N>& views, Body&& body) {
  const TensorView& shape = *views[0];
  for (size_t k = 1; k < N; ++k) {
    check(views[k]->dim() == shape.dim(),
          "elementwise kernel: operand " + std::to_string(k) + " has " +
              std::to_string(views[k]->dim()) + " dims, expected " + std::to_string(shape.dim()));
  }
  if (shape.numel() == 0) return;
  const int64_t dims = shape.dim();
  if (dims == 0) {
    body(std::array<int64_t, N>{});
    return;
  }
  const int64_t inner = shape.size(dims - 1);
  std::array<int64_t, N> inner_stride{};
  for (size_t k = 0; k < N; ++k) inner_stride[k] = views[k]->stride(dims - 1);

  // An odometer over the outer dimensions.
  int64_t counters[64] = {};
  check(dims <= 64, "elementwise kernel: more than 64 dimensions");
  std::array<int64_t, N> base{};
  while (true) {
    std::array<int64_t, N> offsets = base;
    for (int64_t i = 0; i < inner; ++i) {
      body(offsets);
      for (size_t k = 0; k < N; ++k) offsets[k] += inner_stride[k];
    }
    int64_t d = dims - 2;
    for (; d >= 0; --d) {
      if (++counters[d] < shape.size(d)) {
        for (size_t k = 0; k < N; ++k) base[k] += views[k]->stride(d);
        break;
      }
      for (size_t k = 0; k < N; ++k) base[k] -= views[k]->stride(d) * (shape.size(d) - 1);
      counters[d] = 0;
    }
    if (d < 0) return;
  }
}

// out[i] = fn(inputs[i]...) for inputs that all store In and an output that stores Out.
// Contiguous operands take a flat loop the compiler vectorises.
template <typename Out, typename In, typename Fn, typename... Inputs>
void map_elements(const TensorView& out, Fn&& fn, const Inputs&... inputs) {
  Out* o = out.data<Out>();
  if (out.is_contiguous() && (inputs.is_contiguous() && ...)) {
    const int64_t n = out.numel();
    const auto in_ptrs = std::array<const In*, sizeof...(Inputs)>{inputs.template data<In>()...};
    auto apply = [&](int64_t i) {
      return [&]<size_t... K>(std::index_sequence<K...>) { return fn(in_ptrs[K][i]...); }(
          std::make_index_sequence<sizeof...(Inputs)>{});
    };
    for (int64_t i = 0; i < n; ++i) o[i] = static_cast<Out>(apply(i));
    return;
  }
  const auto in_ptrs = std::array<const In*, sizeof...(Inputs)>{inputs.template data<In>()...};
  for_each_offset<sizeof...(Inputs) + 1>(
      {&out, &inputs...}, [&](const std::array<int64_t, sizeof...(Inputs) + 1>& offsets) {
        o[offsets[0]] = static_cast<Out>([&]<size_t... K>(std::index_sequence<K...>) {
          return fn(in_ptrs[K][offsets[K + 1]]...);
        }(std::make_index_sequence<sizeof...(Inputs)>{}));
      });
}

}  // namespace bp::plugin
