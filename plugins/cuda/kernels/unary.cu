// Functions of one tensor (element functions in unary.cuh), each launched over the dtypes that
// have it.
#include "kernels/elementwise_launch.cuh"
#include "kernels/unary.cuh"

namespace bp::cuda {
namespace {

template <template <typename> class Supported, typename Fn>
void run(std::string_view op, DType dtype, const ElementwiseLaunch<2>& launch, Fn fn) {
  dispatch_dtype<Supported>(op, dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch_elementwise<T, T>(launch, fn);
  });
}

}  // namespace

void launch_unary(UnaryOp op, DType dtype, const ElementwiseLaunch<2>& launch) {
  switch (op) {
    case UnaryOp::Neg: return run<NonBoolDType>("neg", dtype, launch, Negate{});
    case UnaryOp::Abs: return run<AnyDType>("abs", dtype, launch, Absolute{});
    case UnaryOp::Relu: return run<NonBoolDType>("relu", dtype, launch, Relu{});
    case UnaryOp::Exp: return run<FloatingDType>("exp", dtype, launch, Exp{});
    case UnaryOp::Log: return run<FloatingDType>("log", dtype, launch, Log{});
    case UnaryOp::Sqrt: return run<FloatingDType>("sqrt", dtype, launch, Sqrt{});
    case UnaryOp::Tanh: return run<FloatingDType>("tanh", dtype, launch, Tanh{});
    case UnaryOp::Sigmoid: return run<FloatingDType>("sigmoid", dtype, launch, Sigmoid{});
    case UnaryOp::GeluErf: return run<FloatingDType>("gelu", dtype, launch, GeluErf{});
    case UnaryOp::GeluTanh: return run<FloatingDType>("gelu", dtype, launch, GeluTanh{});
    case UnaryOp::Silu: return run<FloatingDType>("silu", dtype, launch, Silu{});
  }
}

}  // namespace bp::cuda
