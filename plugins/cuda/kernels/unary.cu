// Functions of one tensor (element functions in unary.cuh), each instantiated for the dtypes its
// op declares.
#include "kernels/elementwise_launch.cuh"
#include "kernels/unary.cuh"

namespace bp::cuda {
namespace {

template <typename Kernel, typename Fn>
void run(DType dtype, const ElementwiseLaunch<2>& launch, Fn fn) {
  plugin::visit_dtype<Kernel>(dtype, [&](auto tag) {
    using T = device_t<typename decltype(tag)::type>;
    launch_elementwise<T, T>(launch, fn);
  });
}

}  // namespace

void launch_unary(UnaryOp op, DType dtype, const ElementwiseLaunch<2>& launch) {
  switch (op) {
    case UnaryOp::Neg: return run<kernel_dtypes::neg_out>(dtype, launch, Negate{});
    case UnaryOp::Abs: return run<kernel_dtypes::abs_out>(dtype, launch, Absolute{});
    case UnaryOp::Relu: return run<kernel_dtypes::relu_out>(dtype, launch, Relu{});
    case UnaryOp::Exp: return run<kernel_dtypes::exp_out>(dtype, launch, Exp{});
    case UnaryOp::Log: return run<kernel_dtypes::log_out>(dtype, launch, Log{});
    case UnaryOp::Sqrt: return run<kernel_dtypes::sqrt_out>(dtype, launch, Sqrt{});
    case UnaryOp::Tanh: return run<kernel_dtypes::tanh_out>(dtype, launch, Tanh{});
    case UnaryOp::Sigmoid: return run<kernel_dtypes::sigmoid_out>(dtype, launch, Sigmoid{});
    case UnaryOp::GeluErf: return run<kernel_dtypes::gelu_out>(dtype, launch, GeluErf{});
    case UnaryOp::GeluTanh: return run<kernel_dtypes::gelu_out>(dtype, launch, GeluTanh{});
    case UnaryOp::Silu: return run<kernel_dtypes::silu_out>(dtype, launch, Silu{});
  }
}

}  // namespace bp::cuda
