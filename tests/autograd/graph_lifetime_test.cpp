// The graph belongs to the tensors it produced: it goes away with them, step after step, and
// an input without a formula refuses to need a gradient rather than silently get none.
#include "gradcheck.h"

#include <memory>
#include <thread>

using bp::Tensor;

namespace {

Tensor parameter(const std::vector<int64_t>& sizes, uint64_t seed) {
  int64_t count = 1;
  for (int64_t s : sizes) count *= s;
  std::vector<double> values = gradtest::sample_values(count, seed);
  for (double& v : values) v *= 0.5;
  Tensor t = gradtest::tensor_of(values, sizes).to(bp::kFloat32);
  t.requires_grad_();
  return t;
}

}  // namespace

TEST_CASE("the graph goes away with its last output, saved outputs included") {
  Tensor x = parameter({2, 3}, 1);
  std::weak_ptr<bp::autograd::Node> node;
  {
    // exp saves its own output: the node must not keep that output's history alive.
    const Tensor y = bp::sum(bp::exp(x * 2));
    node = y.grad_fn();
    CHECK_FALSE(node.expired());
  }
  CHECK(node.expired());
}

TEST_CASE("a thousand training steps learn, and leave no graph behind") {
  // A two-layer MLP on four points; under LeakSanitizer (make sanitize) any node or saved
  // tensor that outlived its step would be reported.
  const Tensor x = gradtest::tensor_of({1, 0, 0, 1, 1, 1, 0, 0}, {4, 2}).to(bp::kFloat32);
  const Tensor target = bp::from_vector(std::vector<int64_t>{1, 1, 0, 0}, {4});
  Tensor w1 = parameter({8, 2}, 2), b1 = parameter({8}, 3);
  Tensor w2 = parameter({2, 8}, 4), b2 = parameter({2}, 5);
  std::vector<Tensor> parameters{w1, b1, w2, b2};
  std::weak_ptr<bp::autograd::Node> first_graph;
  double first_loss = 0, last_loss = 0;
  for (int step = 0; step < 1000; ++step) {
    const Tensor loss =
        bp::cross_entropy_loss(bp::linear(bp::relu(bp::linear(x, w1, b1)), w2, b2), target);
    if (step == 0) {
      first_graph = loss.grad_fn();
      first_loss = loss.item<float>();
    }
    last_loss = loss.item<float>();
    loss.backward();
    const bp::NoGradGuard no_grad;
    for (Tensor& p : parameters) {
      p.sub_(p.grad() * 0.5);
      p.mutable_grad() = Tensor();
    }
  }
  CHECK(first_graph.expired());
  CHECK(last_loss < first_loss / 10);
}

TEST_CASE("an input without a formula refuses to require grad") {
  Tensor log_probabilities = parameter({2, 3}, 6);
  Tensor class_weights = parameter({3}, 7);
  const Tensor target = bp::from_vector(std::vector<int64_t>{0, 2}, {2});
  try {
    bp::nll_loss(log_probabilities, target, class_weights);
    FAIL("expected a bp::Error");
  } catch (const bp::Error& e) {
    const std::string message = e.what();
    CHECK(message.find("nll_loss_forward: weight requires grad") != std::string::npos);
    CHECK(message.find("weight.detach()") != std::string::npos);
  }
  CHECK(bp::nll_loss(log_probabilities, target, class_weights.detach()).requires_grad());
}

TEST_CASE("graphs recorded on several threads add into one parameter's gradient") {
  // Data parallelism on threads: each thread's graph reaches the same leaf, and the backward
  // passes accumulate into its grad() at the same time (ThreadSanitizer checks it: make tsan).
  Tensor weight = parameter({4}, 8);
  constexpr int kSteps = 50;
  const std::vector<Tensor> inputs{gradtest::tensor_of({1, 2, 3, 4}, {4}).to(bp::kFloat32),
                                   gradtest::tensor_of({-1, 0, 1, 2}, {4}).to(bp::kFloat32)};
  std::vector<std::thread> threads;
  for (const Tensor& input : inputs) {
    threads.emplace_back([&weight, input] {
      for (int step = 0; step < kSteps; ++step) bp::sum(weight * input).backward();
    });
  }
  for (std::thread& thread : threads) thread.join();
  CHECK(weight.grad().to_vector<float>() ==
        std::vector<float>{0, 2 * kSteps, 4 * kSteps, 6 * kSteps});
}
