// The optimizer steps: one parameter and its state updated elementwise, with PyTorch's update
// rules (torch.optim.SGD and AdamW), in the compute type (float for the 16-bit floats). The meta
// step made every input contiguous with param's shape and dtype; each output is the input of the
// same name, or a contiguous temporary that the core copies back, so that an element is read
// before it is written either way.
#include "CPUNativeFunctions.h"

#include "kernels/multiversion.h"
#include "kernels/parallel_elements.h"
#include "kernels/strided_loop.h"

#include <cmath>
#include <cstdint>
#include <string_view>

namespace bp::cpu {
namespace {

// SGD's hyperparameters in the compute type C.
template <typename C>
struct SgdRule {
  C lr, momentum, dampening, weight_decay;
  bool nesterov, first_step;
};

// d = grad + weight_decay * param; with momentum, buffer = d on the first step, else
// momentum * buffer + (1 - dampening) * d, and d becomes d + momentum * buffer (nesterov) or
// buffer; param -= lr * d. Without momentum the buffer is not read and receives d.
template <typename T, typename C>
BP_CPU_MULTIVERSIONED void sgd_elements(int64_t count, const SgdRule<C>& rule, const T* param,
                                        const T* grad, const T* buffer, T* param_out,
                                        T* buffer_out) {
  const bool reads_buffer = rule.momentum != 0 && !rule.first_step;
  for (int64_t i = 0; i < count; ++i) {
    const C p = static_cast<C>(param[i]);
    C d = static_cast<C>(grad[i]);
    if (rule.weight_decay != 0) d += rule.weight_decay * p;
    C b = d;
    if (reads_buffer) b = rule.momentum * static_cast<C>(buffer[i]) + (C(1) - rule.dampening) * d;
    if (rule.momentum != 0) d = rule.nesterov ? d + rule.momentum * b : b;
    param_out[i] = static_cast<T>(p - rule.lr * d);
    buffer_out[i] = static_cast<T>(b);
  }
}

// AdamW's per-step constants in the compute type C.
template <typename C>
struct AdamwRule {
  C decay;                 // 1 - lr * weight_decay
  C beta1, beta2;
  C step_size;             // lr / (1 - beta1^step)
  C bias_correction2_root; // sqrt(1 - beta2^step)
  C eps;
};

// param *= 1 - lr * weight_decay; exp_avg += (1 - beta1) (grad - exp_avg); exp_avg_sq =
// beta2 exp_avg_sq + (1 - beta2) grad^2; param -= step_size exp_avg / (sqrt(exp_avg_sq) /
// sqrt(1 - beta2^step) + eps).
template <typename T, typename C>
BP_CPU_MULTIVERSIONED void adamw_elements(int64_t count, const AdamwRule<C>& rule, const T* param,
                                          const T* grad, const T* exp_avg, const T* exp_avg_sq,
                                          T* param_out, T* exp_avg_out, T* exp_avg_sq_out) {
  for (int64_t i = 0; i < count; ++i) {
    const C g = static_cast<C>(grad[i]);
    const C m = static_cast<C>(exp_avg[i]);
    const C v = static_cast<C>(exp_avg_sq[i]);
    const C new_m = m + (C(1) - rule.beta1) * (g - m);
    const C new_v = rule.beta2 * v + (C(1) - rule.beta2) * g * g;
    const C denominator = std::sqrt(new_v) / rule.bias_correction2_root + rule.eps;
    const C decayed = static_cast<C>(param[i]) * rule.decay;
    param_out[i] = static_cast<T>(decayed - rule.step_size * new_m / denominator);
    exp_avg_out[i] = static_cast<T>(new_m);
    exp_avg_sq_out[i] = static_cast<T>(new_v);
  }
}

}  // namespace

void _sgd_step_out(const TensorView& param, const TensorView& grad,
                   const TensorView& momentum_buffer, double lr, double momentum,
                   double dampening, double weight_decay, bool nesterov, bool first_step,
                   const TensorView& param_out, const TensorView& momentum_buffer_out) {
  plugin::require_dtypes("_sgd_step",
                         {{"grad", &grad},
                          {"momentum_buffer", &momentum_buffer},
                          {"param_out", &param_out},
                          {"momentum_buffer_out", &momentum_buffer_out}},
                         param.dtype());
  plugin::visit_dtype<kernel_dtypes::_sgd_step_out>(param.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    const SgdRule<C> rule{static_cast<C>(lr),           static_cast<C>(momentum),
                          static_cast<C>(dampening),    static_cast<C>(weight_decay),
                          nesterov,                     first_step};
    parallel_dense_chunks(param.numel(), [&](int64_t first, int64_t length) {
      sgd_elements<T, C>(length, rule, param.data<const T>() + first,
                         grad.data<const T>() + first, momentum_buffer.data<const T>() + first,
                         param_out.data<T>() + first, momentum_buffer_out.data<T>() + first);
    });
  });
}

void _adamw_step_out(const TensorView& param, const TensorView& grad, const TensorView& exp_avg,
                     const TensorView& exp_avg_sq, double lr, double beta1, double beta2,
                     double weight_decay, double eps, int64_t step, const TensorView& param_out,
                     const TensorView& exp_avg_out, const TensorView& exp_avg_sq_out) {
  plugin::require_dtypes("_adamw_step",
                         {{"grad", &grad},
                          {"exp_avg", &exp_avg},
                          {"exp_avg_sq", &exp_avg_sq},
                          {"param_out", &param_out},
                          {"exp_avg_out", &exp_avg_out},
                          {"exp_avg_sq_out", &exp_avg_sq_out}},
                         param.dtype());
  const auto steps = static_cast<double>(step);
  plugin::visit_dtype<kernel_dtypes::_adamw_step_out>(param.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    const AdamwRule<C> rule{static_cast<C>(1 - lr * weight_decay),
                            static_cast<C>(beta1),
                            static_cast<C>(beta2),
                            static_cast<C>(lr / (1 - std::pow(beta1, steps))),
                            static_cast<C>(std::sqrt(1 - std::pow(beta2, steps))),
                            static_cast<C>(eps)};
    parallel_dense_chunks(param.numel(), [&](int64_t first, int64_t length) {
      adamw_elements<T, C>(length, rule, param.data<const T>() + first,
                           grad.data<const T>() + first, exp_avg.data<const T>() + first,
                           exp_avg_sq.data<const T>() + first, param_out.data<T>() + first,
                           exp_avg_out.data<T>() + first, exp_avg_sq_out.data<T>() + first);
    });
  });
}

}  // namespace bp::cpu
