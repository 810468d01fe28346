// The optimizer steps (kernels/optimizer.cu): one parameter and its state updated elementwise, in
// place. The meta step made every input contiguous with param's shape and dtype; each output is
// the input of the same name, or a temporary that the core copies back, and every element is
// read before it is written either way.
#include "CUDANativeFunctions.h"

#include "runtime/tensor_access.h"

namespace bp::cuda {

void _sgd_step_out(const TensorView& param, const TensorView& grad,
                   const TensorView& momentum_buffer, double lr, double momentum, double dampening,
                   double weight_decay, bool nesterov, bool first_step, const TensorView& param_out,
                   const TensorView& momentum_buffer_out) {
  plugin::require_dtypes("_sgd_step",
                         {{"grad", &grad},
                          {"momentum_buffer", &momentum_buffer},
                          {"param_out", &param_out},
                          {"momentum_buffer_out", &momentum_buffer_out}},
                         param.dtype());
  const SgdStep step{lr, momentum, dampening, weight_decay, nesterov, first_step};
  const OnDevice on(param_out);
  for_each_launch<5>(
      on.device(), param.sizes(),
      {operand_of(param_out), operand_of(momentum_buffer_out), operand_of(param), operand_of(grad),
       operand_of(momentum_buffer)},
      [&](const ElementwiseLaunch<5>& launch) { launch_sgd_step(param.dtype(), launch, step); });
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
  const AdamwStep rule{lr, beta1, beta2, weight_decay, eps, step};
  const OnDevice on(param_out);
  for_each_launch<7>(
      on.device(), param.sizes(),
      {operand_of(param_out), operand_of(exp_avg_out), operand_of(exp_avg_sq_out),
       operand_of(param), operand_of(grad), operand_of(exp_avg), operand_of(exp_avg_sq)},
      [&](const ElementwiseLaunch<7>& launch) { launch_adamw_step(param.dtype(), launch, rule); });
}

}  // namespace bp::cuda
