// Launches of the activations' gradients (element functions in activation_gradients.cuh).
#include "kernels/activation_gradients.cuh"
#include "kernels/elementwise_launch.cuh"

namespace bp::cuda {
namespace {

template <typename Kernel, typename MakeFn>
void run(DType dtype, const ElementwiseLaunch<3>& launch, MakeFn make_fn) {
  plugin::visit_dtype<Kernel>(dtype, [&](auto tag) {
    using T = device_t<typename decltype(tag)::type>;
    launch_elementwise<T, T, T>(launch, make_fn(plugin::TypeTag<compute_t<T>>{}));
  });
}

}  // namespace

void launch_activation_gradient(ActivationGradient kind, DType dtype,
                                const ElementwiseLaunch<3>& launch, double threshold) {
  switch (kind) {
    case ActivationGradient::GeluErf:
      return run<kernel_dtypes::gelu_backward_grad_input>(dtype, launch,
                                                          [](auto) { return GeluErfGradient{}; });
    case ActivationGradient::GeluTanh:
      return run<kernel_dtypes::gelu_backward_grad_input>(dtype, launch,
                                                          [](auto) { return GeluTanhGradient{}; });
    case ActivationGradient::Threshold:
      return run<kernel_dtypes::threshold_backward_grad_input>(dtype, launch, [&](auto tag) {
        using C = typename decltype(tag)::type;
        return ThresholdGradient<C>{static_cast<C>(threshold)};
      });
  }
}

}  // namespace bp::cuda
