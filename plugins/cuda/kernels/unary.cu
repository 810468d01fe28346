// Functions of one tensor: neg, abs, relu on every dtype that has them; exp, log, sqrt, tanh,
// sigmoid, gelu and silu on floating dtypes (the 16-bit ones computed in float).
#include "elementwise_launch.cuh"

namespace bp::cuda {
namespace {

struct Negate {
  template <typename C>
  __device__ auto operator()(C x) const { return -x; }
};

struct Absolute {
  template <typename C>
  __device__ C operator()(C x) const {
    if constexpr (std::is_floating_point_v<C>) {
      return fabs(x);  // also turns -0.0 into 0.0
    } else if constexpr (std::is_signed_v<C>) {
      return x < 0 ? static_cast<C>(-x) : x;
    } else {
      return x;  // unsigned and bool
    }
  }
};

// Written as "x < 0 ? 0 : x" so that NaN passes through, as PyTorch's relu does.
struct Relu {
  template <typename C>
  __device__ C operator()(C x) const {
    if constexpr (std::is_unsigned_v<C>) {
      return x;
    } else {
      return x < C(0) ? C(0) : x;
    }
  }
};

struct Exp {
  template <typename C>
  __device__ C operator()(C x) const { return math_exp(x); }
};

struct Log {
  template <typename C>
  __device__ C operator()(C x) const { return math_log(x); }
};

struct Sqrt {
  template <typename C>
  __device__ C operator()(C x) const { return math_sqrt(x); }
};

struct Tanh {
  template <typename C>
  __device__ C operator()(C x) const { return math_tanh(x); }
};

struct Sigmoid {
  template <typename C>
  __device__ C operator()(C x) const { return C(1) / (C(1) + math_exp(-x)); }
};

// GELU, exact: x * Phi(x) with Phi the standard normal CDF, as x/2 erfc(-x / sqrt 2), which
// does not cancel for negative x as 1 + erf(x / sqrt 2) does.
struct GeluErf {
  template <typename C>
  __device__ C operator()(C x) const {
    constexpr C kSqrt2 = C(1.41421356237309504880);
    return C(0.5) * x * math_erfc(-x / kSqrt2);
  }
};

// GELU, tanh approximation, as PyTorch's approximate='tanh'.
struct GeluTanh {
  template <typename C>
  __device__ C operator()(C x) const {
    constexpr C kSqrt2OverPi = C(0.79788456080286535588);
    constexpr C kCubic = C(0.044715);
    return C(0.5) * x * (C(1) + math_tanh(kSqrt2OverPi * (x + kCubic * x * x * x)));
  }
};

// SiLU: x * sigmoid(x), written as PyTorch does.
struct Silu {
  template <typename C>
  __device__ C operator()(C x) const { return x / (C(1) + math_exp(-x)); }
};

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
