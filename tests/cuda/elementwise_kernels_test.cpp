// The elementwise kernels (elementwise.cuh) on emulated launches (emulated_launch.h): the dense
// walk at every alignment of its operands (a common scalar head then 16-byte vectors, or one
// element at a time where the operands lie differently), mixed element widths, in place, and the
// strided walk; then the element functions of unary.cuh and binary.cuh through it, against the
// CPU backend. The test build checks every access for alignment, so a vector access the GPU
// would refuse fails here too.
#include "emulated_launch.h"

#include "kernels/binary.cuh"
#include "kernels/elementwise.cuh"
#include "kernels/unary.cuh"

#include "cuda_test_support.h"
#include "kernels/launch_layout.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace {

using bp::cuda::kElementwiseThreads;
using bp::cuda::kVectorWidth;
using bp::cuda::emulated::small_device;

struct AddScaled {
  float alpha;
  __device__ float operator()(float x, float y) const { return x + alpha * y; }
};

struct Identity {
  __device__ float operator()(float x) const { return x; }
};

// elementwise_dense over n elements, on as many blocks as launch_elementwise gives it.
template <typename Out, typename Fn, typename... In>
void run_dense(int64_t n, Fn fn, Out* out, const In*... in) {
  const unsigned int blocks = bp::cuda::dense_blocks<kVectorWidth<Out, In...>>(n, small_device());
  bp::cuda::emulated::launch(dim3(blocks), dim3(kElementwiseThreads), 0,
                             [&] { bp::cuda::elementwise_dense<Out>(n, fn, out, in...); });
}

TEST_CASE(
    "emulated dense elementwise kernel: every alignment, scalar heads and tails, and in place") {
  constexpr int64_t kSpace = 1040;
  alignas(16) static float x[kSpace], y[kSpace], out[kSpace];
  for (int64_t i = 0; i < kSpace; ++i) {
    x[i] = static_cast<float>(i) * 0.5f;
    y[i] = static_cast<float>(i % 17) - 8;
  }
  const AddScaled fn{-2};
  for (const int64_t n : {0, 1, 3, 7, 37, 1029}) {
    for (int out_offset = 0; out_offset < 4; ++out_offset) {
      // Inputs as far from a 16-byte boundary as out (a head, then vectors), and not.
      const int same = out_offset, other = (out_offset + 1) % 4;
      for (const auto [x_offset, y_offset] :
           {std::pair{same, same}, std::pair{same, other}, std::pair{other, same}}) {
        INFO(n << " elements; offsets out " << out_offset << ", x " << x_offset << ", y "
               << y_offset);
        for (float& v : out) v = std::nanf("");
        run_dense(n, fn, out + out_offset, x + x_offset, y + y_offset);
        for (int64_t i = 0; i < kSpace; ++i) {
          const int64_t k = i - out_offset;
          if (k >= 0 && k < n) {
            REQUIRE(out[i] == x[x_offset + k] - 2 * y[y_offset + k]);
          } else {
            REQUIRE(std::isnan(out[i]));
          }
        }
      }
    }
  }
  // In place, x[1:] = x[1:] + 2 y[1:].
  std::vector<float> before(x, x + kSpace);
  run_dense(int64_t{1000}, AddScaled{2}, x + 1, x + 1, y + 1);
  for (int64_t i = 1; i <= 1000; ++i) REQUIRE(x[i] == before[static_cast<size_t>(i)] + 2 * y[i]);
}

TEST_CASE("emulated dense elementwise kernel: a float16 output of float inputs, four per vector") {
  CHECK(kVectorWidth<__half, float> == 4);
  alignas(16) static float in[600];
  alignas(16) static __half out[600];
  for (int i = 0; i < 600; ++i) in[i] = static_cast<float>(i) / 8;
  for (int out_offset = 0; out_offset < 8; ++out_offset) {
    for (const int in_offset : {out_offset % 4, (out_offset + 1) % 4}) {
      INFO("offsets out " << out_offset << ", in " << in_offset);
      for (__half& h : out) h = __float2half_rn(-1.0f);
      run_dense(int64_t{501}, Identity{}, out + out_offset, in + in_offset);
      for (int i = 0; i < 600; ++i) {
        const int k = i - out_offset;
        const float expected = k >= 0 && k < 501 ? in[in_offset + k] : -1.0f;
        REQUIRE(__half2float(out[i]) == expected);
      }
    }
  }
}

TEST_CASE("emulated strided elementwise kernel: a transposed operand and a broadcast one") {
  // out (rows x columns, dense) = x^T + 3 * y, x stored (columns x rows), y one row broadcast.
  constexpr int64_t kRows = 19, kColumns = 23;
  std::vector<float> x(kRows * kColumns), y(kColumns), out(kRows * kColumns, std::nanf(""));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i);
  for (size_t i = 0; i < y.size(); ++i) y[i] = static_cast<float>(i) * 0.25f;
  bp::cuda::StridedShape<3> shape;
  shape.ndim = 2;
  shape.sizes[0] = kColumns, shape.sizes[1] = kRows;  // innermost first
  shape.divisors[0] = bp::cuda::FastDivmod(kColumns);
  const int64_t strides[3][2] = {{1, kColumns}, {kRows, 1}, {1, 0}};
  for (int k = 0; k < 3; ++k) {
    for (int d = 0; d < 2; ++d) shape.strides[k][d] = strides[k][d];
  }
  const int64_t n = kRows * kColumns;
  bp::cuda::emulated::launch(dim3(bp::cuda::grid_blocks(n, kElementwiseThreads, small_device())),
                             dim3(kElementwiseThreads), 0, [&] {
                               bp::cuda::elementwise_strided<float>(shape, n, AddScaled{3},
                                                                    out.data(), x.data(), y.data());
                             });
  for (int64_t r = 0; r < kRows; ++r) {
    for (int64_t c = 0; c < kColumns; ++c) {
      REQUIRE(out[static_cast<size_t>(r * kColumns + c)] ==
              x[static_cast<size_t>(c * kRows + r)] + 3 * y[static_cast<size_t>(c)]);
    }
  }
}

// The element function `fn` over `inputs` (one vector per operand) through the dense kernel.
template <typename T, typename Fn, typename... In>
std::vector<T> apply(Fn fn, const std::vector<In>&... inputs) {
  const auto n = static_cast<int64_t>(std::max({inputs.size()...}));
  std::vector<T> out(static_cast<size_t>(n));
  run_dense(n, fn, out.data(), inputs.data()...);
  return out;
}

template <typename T>
void check_same(const std::vector<T>& actual, const bp::Tensor& expected, double tolerance) {
  const std::vector<T> reference = expected.to_vector<T>();
  REQUIRE(actual.size() == reference.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    INFO("element " << i);
    const auto a = static_cast<double>(actual[i]), e = static_cast<double>(reference[i]);
    if (std::isnan(e)) {
      REQUIRE(std::isnan(a));
    } else if (a != e) {  // infinities match exactly
      REQUIRE(std::abs(a - e) <= tolerance * (1 + std::abs(e)));
    }
  }
}

template <typename T>
void check_floating_functions(double tolerance) {
  std::vector<T> x;
  for (int i = -60; i <= 60; ++i) x.push_back(static_cast<T>(i) / 7);
  x.push_back(std::numeric_limits<T>::quiet_NaN());
  x.push_back(-std::numeric_limits<T>::infinity());
  std::vector<T> y(x.rbegin(), x.rend());
  const bp::Tensor tx = bp::from_vector(x, {static_cast<int64_t>(x.size())});
  const bp::Tensor ty = bp::from_vector(y, {static_cast<int64_t>(y.size())});
  using C = bp::cuda::compute_t<T>;
  SUBCASE("unary") {
    check_same(apply<T>(bp::cuda::Negate{}, x), bp::neg(tx), 0);
    check_same(apply<T>(bp::cuda::Absolute{}, x), bp::abs(tx), 0);
    check_same(apply<T>(bp::cuda::Relu{}, x), bp::relu(tx), 0);
    check_same(apply<T>(bp::cuda::Exp{}, x), bp::exp(tx), tolerance);
    check_same(apply<T>(bp::cuda::Log{}, x), bp::log(tx), tolerance);
    check_same(apply<T>(bp::cuda::Sqrt{}, x), bp::sqrt(tx), tolerance);
    check_same(apply<T>(bp::cuda::Tanh{}, x), bp::tanh(tx), tolerance);
    check_same(apply<T>(bp::cuda::Sigmoid{}, x), bp::sigmoid(tx), tolerance);
    check_same(apply<T>(bp::cuda::GeluErf{}, x), bp::gelu(tx), tolerance);
    check_same(apply<T>(bp::cuda::GeluTanh{}, x), bp::gelu(tx, "tanh"), tolerance);
    check_same(apply<T>(bp::cuda::Silu{}, x), bp::silu(tx), tolerance);
  }
  SUBCASE("binary") {
    check_same(apply<T>(bp::cuda::AddScaled<C>{C(-2.5)}, x, y), bp::add(tx, ty, -2.5), tolerance);
    check_same(apply<T>(bp::cuda::Multiply{}, x, y), bp::mul(tx, ty), tolerance);
    check_same(apply<T>(bp::cuda::Divide{}, x, y), bp::div(tx, ty), tolerance);
    check_same(apply<T>(bp::cuda::Maximum{}, x, y), bp::maximum(tx, ty), 0);
    check_same(apply<T>(bp::cuda::Minimum{}, x, y), bp::minimum(tx, ty), 0);
  }
}

TEST_CASE("emulated element functions, float64 and float32, as the CPU backend") {
  SUBCASE("float64") { check_floating_functions<double>(1e-13); }
  SUBCASE("float32") { check_floating_functions<float>(2e-6); }
}

TEST_CASE(
    "emulated element functions on integers: wrapping as the dtype does, as the CPU backend") {
  std::vector<int8_t> x;
  for (int v = -128; v <= 127; ++v) x.push_back(static_cast<int8_t>(v));
  std::vector<int8_t> y(x.rbegin(), x.rend());
  const bp::Tensor tx = bp::from_vector(x, {256}), ty = bp::from_vector(y, {256});
  check_same(apply<int8_t>(bp::cuda::Negate{}, x), bp::neg(tx), 0);
  check_same(apply<int8_t>(bp::cuda::Absolute{}, x), bp::abs(tx), 0);
  check_same(apply<int8_t>(bp::cuda::Relu{}, x), bp::relu(tx), 0);
  check_same(apply<int8_t>(bp::cuda::AddScaled<int8_t>{3}, x, y), bp::add(tx, ty, 3), 0);
  check_same(apply<int8_t>(bp::cuda::Multiply{}, x, y), bp::mul(tx, ty), 0);
  check_same(apply<int8_t>(bp::cuda::Maximum{}, x, y), bp::maximum(tx, ty), 0);
}

template <typename T>
void check_overflow_wraps() {
  constexpr T kMax = std::numeric_limits<T>::max(), kMin = std::numeric_limits<T>::min();
  const std::vector<T> x = {kMax, kMin, kMax, 7, kMin, -1, kMax};
  const std::vector<T> y = {1, -1, kMax, kMax, kMin, kMin, 2};
  const bp::Tensor tx = bp::from_vector(x, {7}), ty = bp::from_vector(y, {7});
  check_same(apply<T>(bp::cuda::AddScaled<T>{3}, x, y), bp::add(tx, ty, 3), 0);
  check_same(apply<T>(bp::cuda::AddScaled<T>{kMin}, x, y), bp::add(tx, ty, kMin), 0);
  check_same(apply<T>(bp::cuda::Multiply{}, x, y), bp::mul(tx, ty), 0);
}

TEST_CASE("emulated element functions: int32 and int64 overflow wraps around, as the CPU backend") {
  check_overflow_wraps<int32_t>();
  check_overflow_wraps<int64_t>();
}

}  // namespace
