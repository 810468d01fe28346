// What the generated public functions do about autograd before they run an op: record it when
// derivatives.yaml has formulas, refuse inputs that need a gradient where it cannot record,
// and run it as it is otherwise.
#include "error_text.h"

#include <backplane/autograd.h>
#include <backplane/backplane.h>
#include <doctest/doctest.h>

#include <string>

using autograd_test::contains;
using autograd_test::error_of;

namespace {

bp::Tensor leaf(bp::IntArrayRef sizes) { return bp::randn(sizes).requires_grad_(); }

}  // namespace

TEST_CASE("an op with formulas records a node named after the op") {
  const bp::Tensor x = leaf({2, 3});
  const bp::Tensor y = bp::mul(x, bp::randn({2, 3}));
  REQUIRE(y.grad_fn() != nullptr);
  CHECK(y.grad_fn()->name() == "MulBackward0");
  CHECK(y.grad_fn()->op() == "mul.Tensor");
  CHECK(y.grad_fn()->next_edges().size() == 2);
  CHECK(y.grad_fn()->needs_input_grad(0));
  CHECK_FALSE(y.grad_fn()->needs_input_grad(1));  // the other input needs no gradient

  SUBCASE("without an input that needs a gradient, or with grad mode off, nothing is recorded") {
    CHECK(bp::mul(bp::randn({2}), bp::randn({2})).grad_fn() == nullptr);
    bp::NoGradGuard no_grad;
    CHECK(bp::mul(x, x).grad_fn() == nullptr);
  }
}

TEST_CASE("only the outputs with a gradient get history") {
  const bp::Tensor x = leaf({2, 3});
  const auto [values, indices] = bp::max(x, 1);
  REQUIRE(values.grad_fn() != nullptr);
  CHECK(values.grad_fn()->name() == "MaxBackward0");
  CHECK(indices.grad_fn() == nullptr);
  CHECK_FALSE(indices.requires_grad());
  // An op whose outputs have no gradient records nothing, and refuses nothing.
  CHECK_FALSE(bp::eq(x, x).requires_grad());
  CHECK_FALSE(bp::argmax(x).requires_grad());
}

TEST_CASE("a Tensor[] argument has one edge per element") {
  const bp::Tensor a = leaf({2});
  const bp::Tensor y = bp::cat({a, bp::randn({3}), a});
  REQUIRE(y.grad_fn() != nullptr);
  CHECK(y.grad_fn()->next_edges().size() == 3);
  CHECK(y.grad_fn()->needs_input_grad(0));
  CHECK_FALSE(y.grad_fn()->needs_input_grad(1));
  CHECK(y.grad_fn()->needs_input_grad(2));
}

TEST_CASE("an op that hands back its input records nothing: the input keeps its history") {
  const bp::Tensor x = bp::mul(leaf({2, 3}), 2.0);
  const bp::Tensor same = x.contiguous();
  CHECK(same.grad_fn() == x.grad_fn());
}

TEST_CASE("composites with formulas record one node, the others their parts") {
  CHECK(bp::sum(leaf({2, 3})).grad_fn()->name() == "SumBackward0");
  CHECK(leaf({2, 3}).view({3, 2}).grad_fn()->name() == "ViewBackward0");
  const bp::Tensor product = bp::matmul(leaf({2, 3}), bp::randn({3, 4}));
  CHECK(product.grad_fn()->op() == "mm");
}

TEST_CASE("a functional op without formulas refuses inputs that need a gradient") {
  // Backward kernel ops have none: there is no double backward.
  const bp::Tensor x = leaf({2, 3});
  const std::string message = error_of([&] { bp::threshold_backward(x, x, 0); });
  CHECK(contains(message,
                 "'threshold_backward' has no derivative formula in core/ops/derivatives.yaml"));
  bp::NoGradGuard no_grad;
  CHECK(bp::threshold_backward(x, x, 0).defined());
}

TEST_CASE("in-place and out= overloads refuse inputs that need a gradient") {
  bp::Tensor x = leaf({2, 3});
  bp::Tensor out = bp::empty({2, 3});
  CHECK(contains(error_of([&] { x.add_(bp::ones({2, 3})); }), "add_.Tensor: an in-place op"));
  CHECK(contains(error_of([&] { bp::add_out(out, x, x); }), "add.out: out= overloads"));
  CHECK(contains(error_of([&] { out.copy_(x); }), "copy_: an in-place op"));
  {
    bp::NoGradGuard no_grad;  // as an optimizer's update runs
    x.add_(bp::ones({2, 3}));
    bp::add_out(out, x, x);
  }
  CHECK(x.is_leaf());
}
