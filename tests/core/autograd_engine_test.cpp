// The autograd runtime, with a hand-written node in place of the generated ones: how gradients
// flow, accumulate at leaves, and what is refused.
#include "core_test_support.h"

#include <autograd/record.h>

using namespace bp;
using coretest::check_invalid_argument;

namespace {

Tensor values(std::vector<float> v, IntArrayRef sizes) { return from_vector(v, sizes); }

std::vector<float> read(const Tensor& t) { return t.contiguous().to_vector<float>(); }

// out = self * other, recorded the way a generated recording function records it; `fail`
// makes its backward throw, as a failing backward kernel would.
struct ProductBackward final : autograd::Node {
  autograd::SavedVariable self_, other_;
  bool* fail = nullptr;
  std::string_view name() const override { return "ProductBackward"; }
  std::string_view op() const override { return "product"; }
  std::vector<Tensor> apply(std::vector<Tensor>&& grads) override {
    if (fail != nullptr && *fail) throw Error("the kernel ran out of device memory");
    const Tensor self = self_.unpack(*this, "self");
    const Tensor other = other_.unpack(*this, "other");
    std::vector<Tensor> result(2);
    if (needs_input_grad(0)) result[0] = mul(grads[0], other);
    if (needs_input_grad(1)) result[1] = mul(grads[0], self);
    return result;
  }
  void release_saved() override {
    self_.reset();
    other_.reset();
  }
};

Tensor product(const Tensor& self, const Tensor& other, bool* fail = nullptr) {
  if (!autograd::detail::needs_recording(self, other)) return mul(self, other);
  auto node = std::make_shared<ProductBackward>();
  node->fail = fail;
  node->add_next_edge(self);
  node->add_next_edge(other);
  node->self_ = autograd::SavedVariable(self, false);
  node->other_ = autograd::SavedVariable(other, false);
  Tensor result;
  {
    const NoGradGuard no_grad;
    result = mul(self, other);
  }
  autograd::detail::set_history(result, node, 0);
  return result;
}

Tensor ones_like(const Tensor& t) { return ones(t.sizes()); }

}  // namespace

TEST_CASE("a leaf that requires grad accumulates the gradient of every path to it") {
  Tensor x = values({1, 2, 3}, {3});
  x.requires_grad_();
  const Tensor y = product(product(x, x), x);  // x^3: gradient 3 x^2
  CHECK(!y.is_leaf());
  CHECK(y.grad_fn() != nullptr);
  y.backward(ones_like(y), /*retain_graph=*/true);
  CHECK(read(x.grad()) == std::vector<float>{3, 12, 27});
  y.backward(ones_like(y));
  CHECK(read(x.grad()) == std::vector<float>{6, 24, 54});
}

TEST_CASE("a leaf's gradient is a dense tensor of its own, updatable in place") {
  Tensor x = values({1, 2, 3}, {3});
  x.requires_grad_();
  // sum's gradient is one value expanded to x's shape (stride 0).
  const Tensor total = sum(x);
  total.backward(Tensor(), /*retain_graph=*/true);
  CHECK(x.grad().is_contiguous());
  total.backward();
  CHECK(read(x.grad()) == std::vector<float>{2, 2, 2});
  fill_(x.mutable_grad(), 0);
  CHECK(read(x.grad()) == std::vector<float>{0, 0, 0});

  // add passes its gradient through: a view of a tensor the caller keeps is copied, not shared.
  Tensor z = values({1, 2}, {2});
  z.requires_grad_();
  const Tensor given = values({5, 6, 7, 8}, {4});
  add(z, ones_like(z)).backward(given.slice(0, 0, 2));
  z.mutable_grad().add_(ones_like(z));
  CHECK(read(given) == std::vector<float>{5, 6, 7, 8});
}

TEST_CASE("a second backward through a freed graph says to retain it") {
  Tensor x = values({1, 2}, {2});
  x.requires_grad_();
  const Tensor y = product(x, x);
  y.backward(ones_like(y));
  check_invalid_argument([&] { y.backward(ones_like(y)); }, {"second time", "retain_graph=true"});
}

TEST_CASE("an in-place write to a saved tensor is refused at backward, naming the op") {
  Tensor x = values({1, 2}, {2});
  x.requires_grad_();
  Tensor w = values({3, 4}, {2});
  const Tensor y = product(x, w);
  const uint64_t before = w._version();
  w.add_(1);
  CHECK(w._version() == before + 1);
  check_invalid_argument([&] { y.backward(ones_like(y)); },
                         {"ProductBackward", "other", "in-place"});
}

TEST_CASE("a failing backward names the op and leaves the graph usable") {
  Tensor x = values({1, 2}, {2});
  x.requires_grad_();
  bool fail = true;
  const Tensor y = product(x, x, &fail);
  check_invalid_argument([&] { y.backward(ones_like(y)); },
                         {"backward of product", "out of device memory"});
  fail = false;
  y.backward(ones_like(y));
  CHECK(read(x.grad()) == std::vector<float>{2, 4});
}

TEST_CASE("autograd::grad returns gradients without touching grad()") {
  Tensor x = values({1, 2}, {2});
  Tensor unused = values({5}, {1});
  x.requires_grad_();
  unused.requires_grad_();
  const Tensor y = product(x, x);
  const std::vector<Tensor> g = autograd::grad({y}, {x}, {ones_like(y)}, /*retain_graph=*/true);
  CHECK(read(g[0]) == std::vector<float>{2, 4});
  CHECK(!x.grad().defined());
  check_invalid_argument([&] { autograd::grad({y}, {unused}, {ones_like(y)}, true); },
                         {"input 0 is not used", "allow_unused"});
  const std::vector<Tensor> none = autograd::grad({y}, {unused}, {ones_like(y)}, true,
                                                  /*allow_unused=*/true);
  CHECK(!none[0].defined());
}

TEST_CASE("a broadcast input gets its gradient summed back to its own shape") {
  Tensor row = values({1, 2, 3}, {3});
  row.requires_grad_();
  const Tensor y = product(row, ones({2, 3}));
  y.backward(ones_like(y));
  CHECK(read(row.grad()) == std::vector<float>{2, 2, 2});
}

TEST_CASE("backward needs a gradient for an output of more than one element") {
  Tensor x = values({1, 2}, {2});
  x.requires_grad_();
  const Tensor y = product(x, x);
  check_invalid_argument([&] { y.backward(); }, {"one-element output", "[2]"});
  y.backward(values({1, 10}, {2}));
  CHECK(read(x.grad()) == std::vector<float>{2, 40});
}

TEST_CASE("the given gradients must match the outputs in number and shape") {
  Tensor x = values({1, 2}, {2});
  x.requires_grad_();
  const Tensor y = product(x, x);
  check_invalid_argument(
      [&] {
        autograd::backward({y}, {ones({2}), ones({2})}, true);
      },
      {"1 outputs but 2 grad_outputs", "one gradient per output or none"});
  check_invalid_argument([&] { y.backward(ones({3}), true); },
                         {"gradient for output 0 has shape [3]", "output has shape [2]"});
  check_invalid_argument([&] { autograd::backward({x.detach()}); },
                         {"output 0 does not require grad", "requires_grad_()"});
}

TEST_CASE("nothing is recorded under NoGradGuard, and guards nest") {
  Tensor x = values({1, 2}, {2});
  x.requires_grad_();
  {
    const NoGradGuard outer;
    { const NoGradGuard inner; }
    CHECK(!is_grad_enabled());
    CHECK(!product(x, x).requires_grad());
  }
  CHECK(is_grad_enabled());
  CHECK(product(x, x).requires_grad());
}

TEST_CASE("requires_grad_ takes floating-point leaves only") {
  Tensor i = from_vector(std::vector<int64_t>{1, 2}, {2});
  check_invalid_argument([&] { i.requires_grad_(); }, {"floating-point", "Long"});
  Tensor x = values({1, 2}, {2});
  x.requires_grad_();
  const Tensor y = product(x, x);
  check_invalid_argument([&] { Tensor(y).requires_grad_(false); }, {"not a leaf", "detach"});
  const Tensor d = y.detach();
  CHECK(!d.requires_grad());
  CHECK(d.is_leaf());
  CHECK(d.impl()->storage().get() == y.impl()->storage().get());
}

TEST_CASE("every write through Backplane moves the storage's version, shared by its views") {
  Tensor x = zeros({2, 2});
  Tensor view = x.select(0, 1);
  const uint64_t start = x._version();
  view.fill_(3);
  CHECK(x._version() == start + 1);
  x.copy_(ones({2, 2}));
  CHECK(view._version() == start + 2);
}
