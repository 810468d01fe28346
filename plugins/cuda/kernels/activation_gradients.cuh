// The gradients of activations as element functions of (grad_output, self), in the compute type:
// GELU's (exact and tanh approximation, as PyTorch's gelu_backward) and the threshold's (relu's).
//
// Launched by activation_gradients.cu; a header so that the host tests compile these functions
// too (tests/cuda/emulated_launch.h).
#pragma once

#include "kernels/unary.cuh"

namespace bp::cuda {
// Internal to each includer: the kernel library and the host tests each compile their own.
namespace {

// d/dx x Phi(x) = Phi(x) + x phi(x), phi the standard normal density.
struct GeluErfGradient {
  template <typename C>
  __device__ C operator()(C g, C x) const {
    constexpr C kInverseSqrt2Pi = C(0.39894228040143267794);
    const C density = kInverseSqrt2Pi * math_exp(C(-0.5) * x * x);
    return g * (cdf(x) + x * density);
  }
  __device__ static float cdf(float x) { return standard_normal_cdf(x); }
  __device__ static double cdf(double x) {
    constexpr double kSqrt2 = 1.41421356237309504880;
    return 0.5 * erfc(-x / kSqrt2);
  }
};

// The derivative of 0.5 x (1 + tanh(u)), u = sqrt(2 / pi) (x + 0.044715 x^3), written as PyTorch
// writes it.
struct GeluTanhGradient {
  template <typename C>
  __device__ C operator()(C g, C x) const {
    constexpr C kSqrt2OverPi = C(0.79788456080286535588);
    constexpr C kCubic = C(0.044715);
    const C inner = kSqrt2OverPi * (x + kCubic * x * x * x);
    const C tanh_inner = math_tanh(inner);
    const C left_derivative = C(0.5) * (C(1) + tanh_inner);
    // Far from 0, 1 - tanh^2 is 0 while 1 + 3 c x^2 may overflow: the term is 0 there.
    const C sech_squared = C(1) - tanh_inner * tanh_inner;
    const C right_derivative = sech_squared == C(0) ? C(0)
                                                    : C(0.5) * x * sech_squared * kSqrt2OverPi *
                                                          (C(1) + C(3) * kCubic * x * x);
    return g * (left_derivative + right_derivative);
  }
};

// grad_output where self > threshold, else 0 (so NaN in self lets the gradient through, as
// PyTorch's `self <= threshold ? 0 : grad` does).
template <typename C>
struct ThresholdGradient {
  C threshold;
  __device__ C operator()(C g, C x) const { return x <= threshold ? C(0) : g; }
};

}  // namespace
}  // namespace bp::cuda
