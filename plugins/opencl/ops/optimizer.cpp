// The optimizer steps, _sgd_step and _adamw_step: one parameter and its state updated by one
// elementwise kernel (kernels/elementwise.cl), with PyTorch's update rules in the compute type
// (float for the 16-bit floats). The meta step gave every input param's shape and dtype; each
// output is the input of the same name, or a temporary that the core copies back.
#include "OpenCLNativeFunctions.h"

#include "kernels/scalar_args.h"
#include "runtime/kernel_launch.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace bp::opencl {
namespace {

// Every tensor of a step over param's shape, outputs first: the operands of its kernel.
std::vector<Operand> step_operands(std::string_view op, const TensorView& param,
                                   std::initializer_list<const TensorView*> tensors) {
  std::vector<Operand> operands;
  for (const TensorView* tensor : tensors) {
    plugin::check(std::ranges::equal(tensor->sizes(), param.sizes()),
                  std::string(op) + ": every tensor needs param's shape");
    operands.push_back(operand_of(*tensor));
  }
  return operands;
}

}  // namespace

void _sgd_step_out(const TensorView& param, const TensorView& grad,
                   const TensorView& momentum_buffer, double lr, double momentum, double dampening,
                   double weight_decay, bool nesterov, bool first_step, const TensorView& param_out,
                   const TensorView& momentum_buffer_out) {
  constexpr std::string_view op = "_sgd_step";
  plugin::require_dtype_of<plugin::kernel_dtypes::_sgd_step_out>(param.dtype());
  plugin::require_dtypes(op,
                         {{"grad", &grad},
                          {"momentum_buffer", &momentum_buffer},
                          {"param_out", &param_out},
                          {"momentum_buffer_out", &momentum_buffer_out}},
                         param.dtype());
  Device& device = device_of(param);
  device.require_double_precision_for(op, param.dtype());
  const DType dtype = param.dtype();
  KernelArgs tail;
  tail.add(compute_scalar(dtype, lr))
      .add(compute_scalar(dtype, momentum))
      .add(compute_scalar(dtype, dampening))
      .add(compute_scalar(dtype, weight_decay))
      .add(cl_int{nesterov})
      .add(cl_int{first_step});
  launch_elementwise(
      device, device.program(KernelSource::Elementwise, dtype), "sgd_step", op, param.sizes(),
      step_operands(op, param, {&param_out, &momentum_buffer_out, &param, &grad, &momentum_buffer}),
      tail);
}

// The bias corrections are computed once, in double, as the CPU backend does.
void _adamw_step_out(const TensorView& param, const TensorView& grad, const TensorView& exp_avg,
                     const TensorView& exp_avg_sq, double lr, double beta1, double beta2,
                     double weight_decay, double eps, int64_t step, const TensorView& param_out,
                     const TensorView& exp_avg_out, const TensorView& exp_avg_sq_out) {
  constexpr std::string_view op = "_adamw_step";
  plugin::require_dtype_of<plugin::kernel_dtypes::_adamw_step_out>(param.dtype());
  plugin::require_dtypes(op,
                         {{"grad", &grad},
                          {"exp_avg", &exp_avg},
                          {"exp_avg_sq", &exp_avg_sq},
                          {"param_out", &param_out},
                          {"exp_avg_out", &exp_avg_out},
                          {"exp_avg_sq_out", &exp_avg_sq_out}},
                         param.dtype());
  Device& device = device_of(param);
  device.require_double_precision_for(op, param.dtype());
  const DType dtype = param.dtype();
  const auto steps = static_cast<double>(step);
  KernelArgs tail;
  tail.add(compute_scalar(dtype, 1 - lr * weight_decay))
      .add(compute_scalar(dtype, beta1))
      .add(compute_scalar(dtype, beta2))
      .add(compute_scalar(dtype, lr / (1 - std::pow(beta1, steps))))
      .add(compute_scalar(dtype, std::sqrt(1 - std::pow(beta2, steps))))
      .add(compute_scalar(dtype, eps));
  launch_elementwise(device, device.program(KernelSource::Elementwise, dtype), "adamw_step", op,
                     param.sizes(),
                     step_operands(op, param,
                                   {&param_out, &exp_avg_out, &exp_avg_sq_out, &param, &grad,
                                    &exp_avg, &exp_avg_sq}),
                     tail);
}

}  // namespace bp::opencl
