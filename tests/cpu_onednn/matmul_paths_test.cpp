// The cpu backend's matrix products at sizes where its oneDNN paths matter: every operand
// layout (read in place, staged, or a matrix repeated over the batch), every way addmm's addend
// is fused, float16 and bfloat16 over several float32 blocks, and the float64 and integer loops
// over several tiles and threads. Sample values are multiples of 1/8, so every float32 sum here
// is exact and the float32 (oneDNN) and float64 (loop) paths must agree to the last bit.
#include "op_test_support.h"

#include <cstdint>
#include <string>

namespace optest {
namespace {

struct ProductShape {
  int64_t n, k, m;
};
// Larger than one gemm block in each dimension, a single row, and a single inner element.
constexpr ProductShape kShapes[] = {{67, 129, 45}, {1, 300, 7}, {130, 1, 70}};

// `op` run on float64 copies of the inputs: the plugin's own loops, a path independent of
// oneDNN.
Values float64_result(const std::function<Tensor(const std::vector<Tensor>&)>& op,
                      const std::vector<Tensor>& inputs) {
  std::vector<Tensor> converted;
  for (const Tensor& input : inputs) converted.push_back(input.to(bp::kFloat64));
  return values_of(op(converted));
}

std::string describe(const ProductShape& s) {
  return "(" + std::to_string(s.n) + " x " + std::to_string(s.k) + ") @ (" + std::to_string(s.k) +
         " x " + std::to_string(s.m) + ")";
}

}  // namespace

TEST_CASE("float32 mm and bmm through oneDNN agree with the float64 loops in every layout") {
  const auto mm = [](const std::vector<Tensor>& t) { return bp::mm(t[0], t[1]); };
  const auto bmm = [](const std::vector<Tensor>& t) { return bp::bmm(t[0], t[1]); };
  for (const ProductShape& s : kShapes) {
    for (const Layout a_layout : kAllLayouts) {
      for (const Layout b_layout : kAllLayouts) {
        INFO(describe(s) << ", a " << name_of(a_layout) << ", b " << name_of(b_layout));
        const Tensor a = sample_tensor({s.n, s.k}, bp::kFloat32, a_layout, 1);
        const Tensor b = sample_tensor({s.k, s.m}, bp::kFloat32, b_layout, 2);
        check_tensor(bp::mm(a, b), {s.n, s.m}, bp::kFloat32, float64_result(mm, {a, b}));

        // Expanded repeats one matrix over the batch, which no gemm layout describes.
        const Tensor batch_a = sample_tensor({3, s.n, s.k}, bp::kFloat32, a_layout, 3);
        const Tensor batch_b = sample_tensor({3, s.k, s.m}, bp::kFloat32, b_layout, 4);
        check_tensor(bp::bmm(batch_a, batch_b), {3, s.n, s.m}, bp::kFloat32,
                     float64_result(bmm, {batch_a, batch_b}));
      }
    }
  }
}

TEST_CASE("addmm fuses a bias row, a full addend, and an in-place addend, for any beta and alpha") {
  struct Coefficients {
    double beta, alpha;
  };
  // (1, 1) is linear's bias; beta != alpha rescales the bias; alpha == 0 cannot fold into one.
  const Coefficients coefficients[] = {{1, 1}, {2, 3}, {0.5, 0.5}, {0, 2}, {1, 0}, {-1, 0.25}};
  const int64_t n = 67, k = 129, m = 45;
  const Shape self_shapes[] = {{n, m}, {m}, {1, m}, {n, 1}, {}};
  const Tensor mat1 = sample_tensor({n, k}, bp::kFloat32, Layout::Contiguous, 5);
  const Tensor mat2 = sample_tensor({k, m}, bp::kFloat32, Layout::Transposed, 6);
  for (const auto& [beta, alpha] : coefficients) {
    for (const Shape& self_shape : self_shapes) {
      for (const Layout self_layout : {Layout::Contiguous, Layout::Transposed, Layout::Sliced}) {
        INFO("beta " << beta << " alpha " << alpha << " self " << shape_string(self_shape) << " "
                     << name_of(self_layout));
        const Tensor self = sample_tensor(self_shape, bp::kFloat32, self_layout, 7);
        const auto addmm = [&](const std::vector<Tensor>& t) {
          return bp::addmm(t[0], t[1], t[2], beta, alpha);
        };
        const Values expected = float64_result(addmm, {self, mat1, mat2});
        check_tensor(bp::addmm(self, mat1, mat2, beta, alpha), {n, m}, bp::kFloat32, expected);

        Tensor out = empty_tensor({n, m}, bp::kFloat32, Layout::Contiguous);
        bp::addmm_out(out, self, mat1, mat2, beta, alpha);
        check_tensor(out, {n, m}, bp::kFloat32, expected);

        if (self_shape != Shape{n, m}) continue;
        Tensor in_place = self.contiguous().clone();
        in_place.addmm_(mat1, mat2, beta, alpha);
        check_tensor(in_place, {n, m}, bp::kFloat32, expected);
      }
    }
  }
}

TEST_CASE("float16 and bfloat16 products agree with float32 rounded once, over several blocks") {
  // Enough rows for two blocks of the float32 path (2^20 elements of a, out and the addend per
  // block: 227 rows here), and for oneDNN's own 16-bit kernels where the CPU has them.
  const int64_t n = 300, k = 4000, m = 300;
  for (const DType dtype : {bp::kFloat16, bp::kBFloat16}) {
    for (const Layout layout : {Layout::Contiguous, Layout::Transposed}) {
      INFO(name_of(dtype) << " " << name_of(layout));
      const Tensor a = sample_tensor({n, k}, dtype, layout, 8);
      const Tensor b = sample_tensor({k, m}, dtype, Layout::Transposed, 9);
      const Tensor bias = sample_tensor({m}, dtype, Layout::Contiguous, 10);
      const Tensor addend = sample_tensor({n, m}, dtype, layout, 11);
      const auto mm = [](const std::vector<Tensor>& t) { return bp::mm(t[0], t[1]); };
      const auto linear = [](const std::vector<Tensor>& t) { return bp::addmm(t[0], t[1], t[2]); };
      const auto scaled = [](const std::vector<Tensor>& t) {
        return bp::addmm(t[0], t[1], t[2], 2, 0.5);
      };
      check_tensor(bp::mm(a, b), {n, m}, dtype, float64_result(mm, {a, b}));
      check_tensor(bp::addmm(bias, a, b), {n, m}, dtype, float64_result(linear, {bias, a, b}));
      check_tensor(bp::addmm(addend, a, b, 2, 0.5), {n, m}, dtype,
                   float64_result(scaled, {addend, a, b}));
      const Tensor batch_a = sample_tensor({2, 100, k}, dtype, layout, 12);
      const Tensor batch_b = sample_tensor({2, k, 70}, dtype, Layout::Contiguous, 13);
      const auto bmm = [](const std::vector<Tensor>& t) { return bp::bmm(t[0], t[1]); };
      check_tensor(bp::bmm(batch_a, batch_b), {2, 100, 70}, dtype,
                   float64_result(bmm, {batch_a, batch_b}));
    }
  }
}

TEST_CASE("float64 and integer products on the plugin's loops span several tiles and threads") {
  // More rows, columns and inner elements than one tile (16 x 256, slices of 128) holds; the
  // float32 result through oneDNN is exact here, so it is the reference.
  const int64_t n = 70, k = 300, m = 600;
  for (const DType dtype : {bp::kFloat64, bp::kInt32, bp::kInt64}) {
    for (const Layout layout : kAllLayouts) {
      INFO(name_of(dtype) << " " << name_of(layout));
      const Tensor a = sample_tensor({n, k}, dtype, layout, 14);
      const Tensor b = sample_tensor({k, m}, dtype, Layout::Transposed, 15);
      const Tensor self = sample_tensor({m}, dtype, Layout::Contiguous, 16);
      const Tensor expected =
          bp::addmm(self.to(bp::kFloat32), a.to(bp::kFloat32), b.to(bp::kFloat32), 2, 3);
      check_tensor(bp::addmm(self, a, b, 2, 3), {n, m}, dtype, values_of(expected));
    }
  }
}

}  // namespace optest
