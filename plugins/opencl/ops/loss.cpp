// The negative log-likelihood loss and its gradient (kernels/loss.cl). The meta step made self
// (N, C) or (C), target (N) or () of Int64 and weight (C), and converted weight, grad_output and
// total_weight to self's dtype. The targets are read back and checked on the host first, so
// that one out of range is the CPU backend's error rather than a read past the buffer; this
// waits for the device.
#include "OpenCLNativeFunctions.h"

#include "runtime/kernel_launch.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace bp::opencl {
namespace {

// What both kernels read of self, target and weight.
struct LossOperands {
  int64_t samples;  // a 1-D self is one sample
  int64_t classes;
  cl_long2 self_stride;
  int64_t target_stride;
};

LossOperands loss_operands(std::string_view op, const TensorView& self, const TensorView& target,
                           int64_t ignore_index) {
  require_dtype(op, "target", target, DType::Int64);
  device_of(self).require_double_precision_for(op, self.dtype());
  const bool batch = self.dim() == 2;
  LossOperands operands{batch ? self.size(0) : 1, self.size(self.dim() - 1), {}, 0};
  operands.self_stride.s[0] = batch ? self.stride(0) : 0;
  operands.self_stride.s[1] = self.stride(self.dim() - 1);
  operands.target_stride = target.dim() > 0 ? target.stride(0) : 0;
  for (const int64_t t : read_int64_elements(target, "the targets of " + std::string(op))) {
    if (t != ignore_index && (t < 0 || t >= operands.classes)) {
      throw plugin::Error(BP_STATUS_INVALID_ARGUMENT,
                          std::string(op) + ": target " + std::to_string(t) +
                              " is out of bounds for " + std::to_string(operands.classes) +
                              " classes (nor is it ignore_index)");
    }
  }
  return operands;
}

// target, then weight (self standing in for an absent one, which is not read).
void add_target_and_weight(KernelArgs& args, const LossOperands& operands, const TensorView& target,
                           const TensorView& self, const TensorView* weight) {
  args.add(buffer_of(target)).add(operands.target_stride);
  args.add(buffer_of(weight ? *weight : self))
      .add(weight ? weight->stride(0) : int64_t{0})
      .add(cl_int{weight != nullptr});
}

}  // namespace

void nll_loss_forward_output(const TensorView& self, const TensorView& target,
                             const TensorView* weight, int64_t reduction, int64_t ignore_index,
                             const TensorView& output, const TensorView& total_weight) {
  constexpr std::string_view op = "nll_loss_forward";
  plugin::require_dtype_of<plugin::kernel_dtypes::nll_loss_forward_output>(self.dtype());
  plugin::require_dtypes(
      op, {{"weight", weight}, {"output", &output}, {"total_weight", &total_weight}}, self.dtype());
  const LossOperands operands = loss_operands(op, self, target, ignore_index);
  Device& device = device_of(output);
  KernelArgs args;
  args.add(operands.samples).add(buffer_of(self)).add(operands.self_stride);
  add_target_and_weight(args, operands, target, self, weight);
  args.add(ignore_index)
      .add(static_cast<cl_int>(reduction))
      .add(buffer_of(output))
      .add(output.dim() > 0 ? output.stride(0) : int64_t{0})
      .add(buffer_of(total_weight));
  // One work-group, whose lanes share the samples.
  WorkSize work;
  work.global[0] = work.local[0] = device.work_group_size();
  launch(device, device.program(KernelSource::Loss, self.dtype()), "nll_loss", args, work);
}

void nll_loss_backward_grad_input(const TensorView& grad_output, const TensorView& self,
                                  const TensorView& target, const TensorView* weight,
                                  int64_t reduction, int64_t ignore_index,
                                  const TensorView& total_weight, const TensorView& grad_input) {
  constexpr std::string_view op = "nll_loss_backward";
  plugin::require_dtype_of<plugin::kernel_dtypes::nll_loss_backward_grad_input>(self.dtype());
  plugin::require_dtypes(op,
                         {{"grad_output", &grad_output},
                          {"weight", weight},
                          {"total_weight", &total_weight},
                          {"grad_input", &grad_input}},
                         self.dtype());
  const LossOperands operands = loss_operands(op, self, target, ignore_index);
  Device& device = device_of(grad_input);
  const int64_t elements = operands.samples * operands.classes;
  if (elements == 0) return;
  const bool batch = grad_input.dim() == 2;
  cl_long2 out_stride{};
  out_stride.s[0] = batch ? grad_input.stride(0) : 0;
  out_stride.s[1] = grad_input.stride(grad_input.dim() - 1);
  const bool per_sample = reduction == 0 && batch;
  KernelArgs args;
  args.add(operands.samples)
      .add(operands.classes)
      .add(buffer_of(grad_input))
      .add(out_stride)
      .add(buffer_of(grad_output))
      .add(per_sample ? grad_output.stride(0) : int64_t{0});
  add_target_and_weight(args, operands, target, self, weight);
  args.add(ignore_index)
      .add(cl_int{per_sample})
      .add(cl_int{reduction == 1})
      .add(buffer_of(total_weight));
  launch(device, device.program(KernelSource::Loss, self.dtype()), "nll_loss_backward", args,
         elementwise_work(device, elements));
}

}  // namespace bp::opencl
