// Arithmetic on two tensors of one dtype (element functions in binary.cuh): add, sub as add with
// -alpha, mul, div, maximum, minimum.
#include "kernels/binary.cuh"
#include "kernels/elementwise_launch.cuh"

namespace bp::cuda {
namespace {

template <template <typename> class Supported>
void run(std::string_view op, DType dtype, const ElementwiseLaunch<3>& launch, const auto& make_fn) {
  dispatch_dtype<Supported>(op, dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch_elementwise<T, T, T>(launch, make_fn(tag));
  });
}

template <typename Fn>
auto same_for_every_type(Fn fn) {
  return [fn](auto /*tag*/) { return fn; };
}

}  // namespace

void launch_binary(BinaryOp op, DType dtype, const ElementwiseLaunch<3>& launch, const Scalar& alpha) {
  switch (op) {
    case BinaryOp::Add:
      return run<AnyDType>("add", dtype, launch, [&](auto tag) {
        using C = compute_t<typename decltype(tag)::type>;
        return AddScaled<C>{alpha.to<C>()};
      });
    case BinaryOp::Mul: return run<AnyDType>("mul", dtype, launch, same_for_every_type(Multiply{}));
    case BinaryOp::Div: return run<FloatingDType>("div", dtype, launch, same_for_every_type(Divide{}));
    case BinaryOp::Maximum: return run<AnyDType>("maximum", dtype, launch, same_for_every_type(Maximum{}));
    case BinaryOp::Minimum: return run<AnyDType>("minimum", dtype, launch, same_for_every_type(Minimum{}));
  }
}

}  // namespace bp::cuda
