// The element functions of two tensors of one dtype: add (and sub, as add with -alpha), mul and
// div; maximum and minimum are device_support.cuh's. They take and return the compute type, and
// integers wrap around as on the CPU backend (backplane/sdk/wrapping_arithmetic.hpp).
//
// Launched by binary.cu; a header so that the host tests compile these functions too
// (tests/cuda/emulated_launch.h).
#pragma once

#include "kernels/device_support.cuh"

#include <backplane/sdk/wrapping_arithmetic.hpp>

#include <functional>

namespace bp::cuda {
// Internal to each includer: the kernel library and the host tests each compile their own.
namespace {

template <typename C>
struct AddScaled {
  C alpha;
  __device__ C operator()(C x, C y) const {
    return plugin::wrapping(std::plus{}, x, plugin::wrapping(std::multiplies{}, alpha, y));
  }
};

struct Multiply {
  template <typename C>
  __device__ C operator()(C x, C y) const {
    return plugin::wrapping(std::multiplies{}, x, y);
  }
};

struct Divide {
  template <typename C>
  __device__ C operator()(C x, C y) const {
    return x / y;
  }
};

}  // namespace
}  // namespace bp::cuda
