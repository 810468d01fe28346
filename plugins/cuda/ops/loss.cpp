// The negative log-likelihood loss and its gradient (kernels/nll_loss.cu). The meta step made self
// ([N, C] or [C]), target (Int64, [N] or []) and weight ([C]) contiguous, and converted weight,
// grad_output and total_weight to self's dtype. A target that is neither ignore_index nor a class
// in [0, C) is an error naming it, as on the CPU backend.
#include "CUDANativeFunctions.h"

#include "runtime/tensor_access.h"

#include <string>
#include <string_view>

namespace bp::cuda {
namespace {

NllLoss nll_loss_of(const TensorView& self, const TensorView& target, const TensorView* weight,
                    int64_t reduction, int64_t ignore_index) {
  NllLoss loss;
  loss.samples = self.dim() == 2 ? self.size(0) : 1;
  loss.classes = self.size(self.dim() - 1);
  loss.self = address_of(self);
  loss.target = reinterpret_cast<const int64_t*>(address_of(target));
  loss.weight = weight ? address_of(*weight) : nullptr;
  loss.ignore_index = ignore_index;
  loss.reduce = reduction != 0;
  loss.mean = reduction == 1;
  return loss;
}

void refuse_target(std::string_view op, const std::optional<int64_t>& bad, int64_t classes) {
  if (!bad) return;
  throw plugin::Error(BP_STATUS_INVALID_ARGUMENT,
                      std::string(op) + ": target " + std::to_string(*bad) +
                          " is out of bounds for " + std::to_string(classes) +
                          " classes (nor is it ignore_index)");
}

}  // namespace

void nll_loss_forward_output(const TensorView& self, const TensorView& target,
                             const TensorView* weight, int64_t reduction, int64_t ignore_index,
                             const TensorView& output, const TensorView& total_weight) {
  constexpr std::string_view op = "nll_loss_forward";
  plugin::require_dtypes(
      op, {{"weight", weight}, {"output", &output}, {"total_weight", &total_weight}}, self.dtype());
  require_dtype(op, "target", target, DType::Int64);
  const NllLoss loss = nll_loss_of(self, target, weight, reduction, ignore_index);
  const OnDevice on(output);
  Device& device = on.device();
  DeviceScratch scratch(device);
  const DenseOutput losses(device, output, scratch);
  refuse_target(op,
                launch_nll_loss_forward(self.dtype(), loss, losses.data(), address_of(total_weight),
                                        device.launch_target(), scratch),
                loss.classes);
  losses.copy_back();
}

void nll_loss_backward_grad_input(const TensorView& grad_output, const TensorView& self,
                                  const TensorView& target, const TensorView* weight,
                                  int64_t reduction, int64_t ignore_index,
                                  const TensorView& total_weight, const TensorView& grad_input) {
  constexpr std::string_view op = "nll_loss_backward";
  plugin::require_dtypes(op,
                         {{"grad_output", &grad_output},
                          {"weight", weight},
                          {"total_weight", &total_weight},
                          {"grad_input", &grad_input}},
                         self.dtype());
  require_dtype(op, "target", target, DType::Int64);
  const NllLoss loss = nll_loss_of(self, target, weight, reduction, ignore_index);
  const OnDevice on(grad_input);
  Device& device = on.device();
  DeviceScratch scratch(device);
  const DenseOutput gradient(device, grad_input, scratch);
  const size_t element_bytes = element_size(grad_input.dtype());
  const DimValues<int64_t> dense_strides(1, 1);
  const int64_t count[] = {grad_input.numel()};
  for_each_launch<1>(
      device, count,
      {Operand{static_cast<char*>(gradient.data()), dense_strides.span(), element_bytes}},
      [&](const ElementwiseLaunch<1>& launch) { launch_fill_bits(element_bytes, 0, launch); });
  const bool per_sample = reduction == 0 && self.dim() == 2;
  refuse_target(op,
                launch_nll_loss_backward(self.dtype(), loss, address_of(grad_output), per_sample,
                                         address_of(total_weight), gradient.data(),
                                         device.launch_target(), scratch),
                loss.classes);
  gradient.copy_back();
}

}  // namespace bp::cuda
