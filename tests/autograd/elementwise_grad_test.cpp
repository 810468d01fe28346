// Gradients of the elementwise ops, against finite differences: broadcast inputs (summed back
// to their own shape) and non-contiguous ones.
#include "gradcheck.h"

using namespace gradtest;
using bp::Tensor;
using Args = std::vector<Tensor>;

namespace {
const std::vector<Input> kBroadcastPair{{{2, 3}, Layout::Transposed}, {{3}}};
const std::vector<Input> kStridedPair{{{2, 3}, Layout::Strided}, {{2, 1}}};
}  // namespace

TEST_CASE("add and sub: both inputs, with alpha") {
  for (const auto& inputs : {kBroadcastPair, kStridedPair}) {
    gradcheck([](const Args& t) { return bp::add(t[0], t[1], 2.5); }, inputs);
    gradcheck([](const Args& t) { return bp::sub(t[0], t[1], -1.5); }, inputs);
  }
  gradcheck([](const Args& t) { return bp::add(t[0], 3); }, {{{2, 2}}});
  gradcheck([](const Args& t) { return bp::sub(t[0], 3, 2); }, {{{2, 2}}});
}

TEST_CASE("mul and div: both inputs") {
  for (const auto& inputs : {kBroadcastPair, kStridedPair}) {
    gradcheck([](const Args& t) { return bp::mul(t[0], t[1]); }, inputs);
    gradcheck([](const Args& t) { return bp::div(t[0], t[1]); }, inputs);
  }
  gradcheck([](const Args& t) { return bp::mul(t[0], 1.5); }, {{{3}}});
  gradcheck([](const Args& t) { return bp::div(t[0], 4); }, {{{3}}});
}

TEST_CASE("the same tensor used twice gets both gradients") {
  gradcheck([](const Args& t) { return bp::mul(t[0], t[0]); }, {{{2, 3}, Layout::Transposed}});
}

TEST_CASE("unary ops: neg, abs, exp, log, sqrt, tanh, sigmoid, silu") {
  const Input any{{2, 3}, Layout::Transposed};
  gradcheck([](const Args& t) { return bp::neg(t[0]); }, {any});
  gradcheck([](const Args& t) { return bp::abs(t[0]); }, {any});
  gradcheck([](const Args& t) { return bp::exp(t[0]); }, {any});
  gradcheck([](const Args& t) { return bp::tanh(t[0]); }, {any});
  gradcheck([](const Args& t) { return bp::sigmoid(t[0]); }, {any});
  gradcheck([](const Args& t) { return bp::silu(t[0]); }, {any});
  const Input positive{{2, 3}, Layout::Strided, {0.5, 1.5, 0.25, 2.0, 0.75, 1.25}};
  gradcheck([](const Args& t) { return bp::log(t[0]); }, {positive});
  gradcheck([](const Args& t) { return bp::sqrt(t[0]); }, {positive});
}

TEST_CASE("maximum and minimum: the larger (smaller) input gets the gradient, ties split it") {
  for (const auto& inputs : {kBroadcastPair, kStridedPair}) {
    gradcheck([](const Args& t) { return bp::maximum(t[0], t[1]); }, inputs);
    gradcheck([](const Args& t) { return bp::minimum(t[0], t[1]); }, inputs);
  }
  Tensor a = gradtest::tensor_of({1, 2}, {2});
  Tensor b = gradtest::tensor_of({1, 3}, {2});
  a.requires_grad_();
  b.requires_grad_();
  bp::sum(bp::maximum(a, b)).backward();
  CHECK(a.grad().to_vector<double>() == std::vector<double>{0.5, 0});
  CHECK(b.grad().to_vector<double>() == std::vector<double>{0.5, 1});
}

TEST_CASE("where: each input gets the gradient where it was chosen") {
  const Tensor condition =
      bp::from_vector(std::vector<bool>{true, false, true, false, false, true}, {2, 3});
  gradcheck([&](const Args& t) { return bp::where(condition, t[0], t[1]); }, kBroadcastPair);
}
