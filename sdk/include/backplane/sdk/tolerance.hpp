// How far a kernel's result may be from the host reference and still conform: the one table
// that bp-conformance and BACKPLANE_VALIDATE=compare both read (docs/conformance.md explains
// it). The reference computes floating ops in Float64 on the host and rounds the result to the
// output's dtype; a kernel computing in the dtype itself departs from that by a few rounding
// steps, more where the op sums many terms or calls transcendental functions.
#pragma once

#include <backplane/sdk/dtype.hpp>

#include <cmath>
#include <string_view>

namespace bp::plugin {

// An element conforms when |actual - expected| <= absolute + relative * |expected|.
struct Tolerance {
  double relative = 0;
  double absolute = 0;
};

// Integers and Bool compare exactly; the floating dtypes allow a few units in the last place.
constexpr Tolerance default_tolerance(DType dtype) {
  switch (dtype) {
    case DType::Float32: return {1e-5, 1e-5};
    case DType::Float64: return {1e-10, 1e-10};
    case DType::Float16: return {4e-3, 4e-3};
    case DType::BFloat16: return {2e-2, 2e-2};
    default: return {0, 0};
  }
}

// Ops that sum many rounded terms in the output dtype (matrix products, convolutions,
// normalisations, their gradients) or compose several transcendental functions get ten times
// the default on the floating dtypes.
constexpr bool accumulates_rounding(std::string_view kernel_op) {
  constexpr std::string_view kOps[] = {
      "native_layer_norm.out",
      "native_layer_norm_backward.out",
      "rms_norm.out",
      "batch_norm_inference.out",
      "native_batch_norm.out",
      "native_batch_norm_backward.out",
      "conv2d.out",
      "convolution_backward.out",
      "mm.out",
      "bmm.out",
      "addmm.out",
      "_addmm_activation.out",
      "_scaled_dot_product_fused_attention.out",
      "_softmax_backward_data.out",
      "_log_softmax_backward_data.out",
      "gelu_backward.grad_input",
      "avg_pool2d_backward.grad_input",
      "_adaptive_avg_pool2d_backward.out",
      "nll_loss_forward.output",
      "_adamw_step.out",
  };
  for (const std::string_view op : kOps) {
    if (op == kernel_op) return true;
  }
  return false;
}

// The tolerance of kernel op `kernel_op` ("add.out") for an output of `dtype`.
constexpr Tolerance conformance_tolerance(std::string_view kernel_op, DType dtype) {
  const Tolerance base = default_tolerance(dtype);
  if (!accumulates_rounding(kernel_op)) return base;
  return {base.relative * 10, base.absolute * 10};
}

// Whether `actual` conforms to `expected`: NaN matches NaN, an infinity matches itself only.
inline bool within_tolerance(double actual, double expected, Tolerance tolerance) {
  if (std::isnan(expected) || std::isnan(actual)) return std::isnan(expected) && std::isnan(actual);
  if (std::isinf(expected) || std::isinf(actual)) return actual == expected;
  return std::fabs(actual - expected) <=
         tolerance.absolute + tolerance.relative * std::fabs(expected);
}

}  // namespace bp::plugin
