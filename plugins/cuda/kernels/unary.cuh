// The element functions of one tensor: neg, abs and relu, for integers and floats; exp, log,
// sqrt, tanh, sigmoid, gelu and silu, for floats (the 16-bit ones computed in float).
//
// Launched by unary.cu; a header so that the host tests compile these functions too
// (tests/cuda/emulated_launch.h).
#pragma once

#include "kernels/device_support.cuh"

namespace bp::cuda {
// Internal to each includer: the kernel library and the host tests each compile their own.
namespace {

struct Negate {
  template <typename C>
  __device__ auto operator()(C x) const {
    return -x;
  }
};

struct Absolute {
  template <typename C>
  __device__ C operator()(C x) const {
    if constexpr (std::is_floating_point_v<C>) {
      return fabs(x);  // also turns -0.0 into 0.0
    } else if constexpr (std::is_signed_v<C>) {
      return x < 0 ? static_cast<C>(-x) : x;
    } else {
      return x;  // unsigned and bool
    }
  }
};

// Written as "x < 0 ? 0 : x" so that NaN passes through, as PyTorch's relu does.
struct Relu {
  template <typename C>
  __device__ C operator()(C x) const {
    if constexpr (std::is_unsigned_v<C>) {
      return x;
    } else {
      return x < C(0) ? C(0) : x;
    }
  }
};

struct Exp {
  template <typename C>
  __device__ C operator()(C x) const {
    return math_exp(x);
  }
};

struct Log {
  template <typename C>
  __device__ C operator()(C x) const {
    return math_log(x);
  }
};

struct Sqrt {
  template <typename C>
  __device__ C operator()(C x) const {
    return math_sqrt(x);
  }
};

struct Tanh {
  template <typename C>
  __device__ C operator()(C x) const {
    return math_tanh(x);
  }
};

struct Sigmoid {
  template <typename C>
  __device__ C operator()(C x) const {
    return C(1) / (C(1) + math_exp(-x));
  }
};

// 1 / x within about an ulp: the multiprocessor's reciprocal on the GPU; the host tests divide.
__device__ __forceinline__ float approximate_reciprocal(float x) {
#if defined(__CUDA_ARCH__)
  return __fdividef(1.0f, x);
#else
  return 1.0f / x;
#endif
}

// The standard normal CDF in float, Phi(x) = erfc(-x / sqrt 2) / 2, through the Chebyshev fit of
// erfc in Numerical Recipes in C (2nd ed., section 6.2; fractional error below 1.2e-7): one
// reciprocal and one power of 2, far cheaper than CUDA's erfcf and a division, so that GELU on
// 16-bit data stays bound by memory rather than arithmetic. In float its error stays within 1e-5
// relative for x >= -8, where Phi is above 1e-15 (the GPU's approximate reciprocal and power of
// 2 add a few parts in 1e7).
__device__ __forceinline__ float standard_normal_cdf(float x) {
  constexpr float kLog2e = 1.44269504088896340736f;
  const float z = fabsf(x) * 0.70710678118654752f;
  const float t = approximate_reciprocal(1.0f + 0.5f * z);
  const float series =
      t * (1.00002368f +
           t * (0.37409196f +
                t * (0.09678418f +
                     t * (-0.18628806f +
                          t * (0.27886807f +
                               t * (-1.13520398f +
                                    t * (1.48851587f + t * (-0.82215223f + t * 0.17087277f))))))));
  const float lower_tail = 0.5f * t * exp2f((-z * z - 1.26551223f + series) * kLog2e);  // Phi(-|x|)
  return x < 0 ? lower_tail : 1.0f - lower_tail;
}

// GELU, exact: x * Phi(x) with Phi the standard normal CDF, computed from the lower tail so that
// it does not cancel for negative x as 1 + erf(x / sqrt 2) does.
struct GeluErf {
  __device__ float operator()(float x) const { return x * standard_normal_cdf(x); }
  __device__ double operator()(double x) const {
    constexpr double kSqrt2 = 1.41421356237309504880;
    return 0.5 * x * erfc(-x / kSqrt2);
  }
};

// GELU, tanh approximation, as PyTorch's approximate='tanh'.
struct GeluTanh {
  template <typename C>
  __device__ C operator()(C x) const {
    constexpr C kSqrt2OverPi = C(0.79788456080286535588);
    constexpr C kCubic = C(0.044715);
    return C(0.5) * x * (C(1) + math_tanh(kSqrt2OverPi * (x + kCubic * x * x * x)));
  }
};

// SiLU: x * sigmoid(x), written as PyTorch does.
struct Silu {
  template <typename C>
  __device__ C operator()(C x) const {
    return x / (C(1) + math_exp(-x));
  }
};

}  // namespace
}  // namespace bp::cuda
