// Arithmetic on two tensors of one dtype (element functions in binary.cuh): add, sub as add with
// -alpha, mul, div, maximum, minimum, each instantiated for the dtypes its op declares.
#include "kernels/binary.cuh"
#include "kernels/elementwise_launch.cuh"

namespace bp::cuda {
namespace {

template <typename Kernel, typename Fn>
void run(DType dtype, const ElementwiseLaunch<3>& launch, Fn fn) {
  plugin::visit_dtype<Kernel>(dtype, [&](auto tag) {
    using T = device_t<typename decltype(tag)::type>;
    launch_elementwise<T, T, T>(launch, fn);
  });
}

// out = self + alpha * other, alpha in the compute type.
template <typename Kernel>
void add_scaled(DType dtype, const ElementwiseLaunch<3>& launch, const Scalar& alpha) {
  plugin::visit_dtype<Kernel>(dtype, [&](auto tag) {
    using T = device_t<typename decltype(tag)::type>;
    using C = compute_t<T>;
    launch_elementwise<T, T, T>(launch, AddScaled<C>{alpha.to<C>()});
  });
}

}  // namespace

void launch_binary(BinaryOp op, DType dtype, const ElementwiseLaunch<3>& launch,
                   const Scalar& alpha) {
  switch (op) {
    case BinaryOp::Add: return add_scaled<kernel_dtypes::add_out>(dtype, launch, alpha);
    case BinaryOp::Sub: return add_scaled<kernel_dtypes::sub_out>(dtype, launch, alpha);
    case BinaryOp::Mul: return run<kernel_dtypes::mul_out>(dtype, launch, Multiply{});
    case BinaryOp::Div: return run<kernel_dtypes::div_out>(dtype, launch, Divide{});
    case BinaryOp::Maximum: return run<kernel_dtypes::maximum_out>(dtype, launch, Maximum{});
    case BinaryOp::Minimum: return run<kernel_dtypes::minimum_out>(dtype, launch, Minimum{});
  }
}

}  // namespace bp::cuda
