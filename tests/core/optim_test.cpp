// bp::optim::SGD and AdamW: one or two steps against values worked out by hand from
// torch.optim's update rules, the parameters they skip, and what they refuse.
#include "core_test_support.h"

#include <vector>

using namespace bp;
using coretest::check_invalid_argument;

namespace {

// A parameter that requires grad, holding `v`.
Tensor parameter(std::vector<float> v) {
  Tensor t = from_vector(v, {static_cast<int64_t>(v.size())});
  t.requires_grad_();
  return t;
}

void set_grad(Tensor& parameter, std::vector<float> v) {
  parameter.mutable_grad() = from_vector(v, {static_cast<int64_t>(v.size())});
}

// Checks `t` element by element against `expected`, within float rounding.
void check_values(const Tensor& t, std::vector<double> expected) {
  const std::vector<float> actual = t.contiguous().to_vector<float>();
  REQUIRE(actual.size() == expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    INFO("element " << i);
    CHECK(actual[i] == doctest::Approx(expected[i]).epsilon(1e-6));
  }
}

}  // namespace

TEST_CASE("SGD without momentum moves a parameter by -lr times its gradient") {
  Tensor p = parameter({1, -2});
  optim::SGD sgd({p}, {.lr = 0.1});
  set_grad(p, {0.5, -1});
  sgd.step();
  check_values(p, {0.95, -1.9});
  CHECK(!sgd.momentum_buffer(0).defined());
}

TEST_CASE("SGD with momentum and weight decay starts the buffer from the first gradient") {
  Tensor p = parameter({1, -2});
  optim::SGD sgd({p}, {.lr = 0.1, .momentum = 0.9, .weight_decay = 0.1});
  set_grad(p, {0.5, 0.5});
  // d = g + 0.1 p = [0.6, 0.3]; the buffer starts as d.
  sgd.step();
  check_values(sgd.momentum_buffer(0), {0.6, 0.3});
  check_values(p, {0.94, -2.03});
  // d = [0.594, 0.297]; buffer = 0.9 [0.6, 0.3] + d.
  sgd.step();
  check_values(sgd.momentum_buffer(0), {1.134, 0.567});
  check_values(p, {0.8266, -2.0867});
}

TEST_CASE("SGD dampens the gradient from the second step on") {
  Tensor p = parameter({1, -2});
  optim::SGD sgd({p}, {.lr = 0.1, .momentum = 0.9, .dampening = 0.5});
  set_grad(p, {0.5, -1});
  sgd.step();  // buffer = g
  sgd.step();  // buffer = 0.9 g + 0.5 g
  check_values(sgd.momentum_buffer(0), {0.7, -1.4});
  check_values(p, {0.88, -1.76});  // p - 0.1 (g + 1.4 g)
}

TEST_CASE("SGD with nesterov steps along the gradient plus momentum times the buffer") {
  Tensor p = parameter({1, -2});
  optim::SGD sgd({p}, {.lr = 0.1, .momentum = 0.9, .nesterov = true});
  set_grad(p, {0.5, -1});
  sgd.step();  // buffer = g; step 1.9 g
  check_values(p, {0.905, -1.81});
  sgd.step();  // buffer = 1.9 g; step g + 0.9 * 1.9 g
  check_values(p, {0.7695, -1.539});
}

TEST_CASE("AdamW corrects its running averages' bias and decays weights apart from them") {
  Tensor p = parameter({1, -2});
  optim::AdamW adamw({p}, {.lr = 0.1, .betas = {0.9, 0.999}, .eps = 1e-8, .weight_decay = 0.01});
  set_grad(p, {0.5, -1});
  // p shrinks by lr * weight_decay of itself; with the bias corrections (1 - 0.9, 1 - 0.999),
  // m_hat = g and v_hat = g^2, so the step is lr * sign(g).
  adamw.step();
  CHECK(adamw.state(0).step == 1);
  check_values(adamw.state(0).exp_avg, {0.05, -0.1});
  check_values(adamw.state(0).exp_avg_sq, {0.00025, 0.001});
  check_values(p, {0.899, -1.898});
  // Corrections (1 - 0.9^2, 1 - 0.999^2) again make m_hat = g and v_hat = g^2.
  adamw.step();
  CHECK(adamw.state(0).step == 2);
  check_values(adamw.state(0).exp_avg, {0.095, -0.19});
  check_values(adamw.state(0).exp_avg_sq, {0.00049975, 0.001999});
  check_values(p, {0.798101, -1.796102});
}

TEST_CASE("a parameter that is a strided view is updated where its elements lie") {
  const Tensor storage = from_vector<float>({1, 2, 3, 4}, {2, 2});
  Tensor p = storage.transpose(0, 1);  // [[1, 3], [2, 4]]
  p.requires_grad_();
  optim::SGD sgd({p}, {.lr = 1});
  p.mutable_grad() = from_vector<float>({0.1f, 0.3f, 0.2f, 0.4f}, {2, 2});
  sgd.step();
  check_values(p, {0.9, 2.7, 1.8, 3.6});
  check_values(storage, {0.9, 1.8, 2.7, 3.6});
}

TEST_CASE("AdamW's defaults are torch.optim.AdamW's") {
  const optim::AdamWOptions defaults;
  CHECK(defaults.lr == 1e-3);
  CHECK(defaults.betas.beta1 == 0.9);
  CHECK(defaults.betas.beta2 == 0.999);
  CHECK(defaults.eps == 1e-8);
  CHECK(defaults.weight_decay == 1e-2);
}

TEST_CASE("a parameter without a gradient is left as it is, and gets no state") {
  Tensor stepped = parameter({1});
  Tensor untouched = parameter({1});
  optim::AdamW adamw({stepped, untouched}, {.lr = 0.1});
  set_grad(stepped, {1});
  adamw.step();
  check_values(untouched, {1});
  CHECK(adamw.state(1).step == 0);
  CHECK(!adamw.state(1).exp_avg.defined());
  CHECK(adamw.state(0).step == 1);
}

TEST_CASE("zero_grad drops the gradients, or fills them with zeros when asked to keep them") {
  Tensor p = parameter({1, 2});
  optim::SGD sgd({p}, {.lr = 0.1});
  set_grad(p, {3, 4});
  sgd.zero_grad(/*set_to_none=*/false);
  check_values(p.grad(), {0, 0});
  sgd.zero_grad();
  CHECK(!p.grad().defined());
}

TEST_CASE("an optimizer's step records no autograd graph") {
  Tensor p = parameter({1, 2});
  optim::SGD sgd({p}, {.lr = 0.1, .momentum = 0.9});
  set_grad(p, {1, 1});
  sgd.step();
  CHECK(p.is_leaf());
  CHECK(p.requires_grad());
  CHECK(!sgd.momentum_buffer(0).requires_grad());
}

TEST_CASE("optimizers refuse parameters that backward() cannot give a gradient") {
  check_invalid_argument([] { optim::SGD({}, {}); }, {"SGD", "empty list of parameters"});
  check_invalid_argument([] { optim::AdamW({from_vector<float>({1}, {1})}, {}); },
                         {"AdamW", "parameter 0", "does not require grad", "requires_grad_()"});
  check_invalid_argument([] { optim::SGD({Tensor()}, {}); }, {"parameter 0", "undefined"});
  const Tensor leaf = parameter({1});
  const Tensor computed = mul(leaf, 2);
  check_invalid_argument([&] { optim::SGD({computed}, {}); }, {"parameter 0", "only leaves"});
  check_invalid_argument(
      [&] {
        optim::SGD({leaf, leaf}, {});
      },
      {"parameters 0 and 1 are the same tensor"});
}

TEST_CASE("optimizers refuse hyperparameters outside torch.optim's ranges") {
  const Tensor p = parameter({1});
  check_invalid_argument([&] { optim::SGD({p}, {.lr = -0.1}); },
                         {"SGD", "lr", "at least 0", "-0.1"});
  check_invalid_argument([&] { optim::SGD({p}, {.momentum = -1}); }, {"momentum", "-1"});
  check_invalid_argument([&] { optim::SGD({p}, {.weight_decay = -1}); }, {"weight_decay"});
  check_invalid_argument([&] { optim::SGD({p}, {.lr = 0.1, .nesterov = true}); },
                         {"nesterov", "momentum above 0"});
  check_invalid_argument(
      [&] { optim::SGD({p}, {.lr = 0.1, .momentum = 0.9, .dampening = 0.1, .nesterov = true}); },
      {"nesterov", "dampening 0"});
  check_invalid_argument([&] { optim::AdamW({p}, {.lr = -1}); }, {"AdamW", "lr"});
  check_invalid_argument(
      [&] {
        optim::AdamW({p}, {.betas = {1.0, 0.999}});
      },
      {"beta1 must be in [0, 1)", "got 1"});
  check_invalid_argument([&] { optim::AdamW({p}, {.betas = {0.9, -0.5}}); }, {"beta2", "-0.5"});
  check_invalid_argument([&] { optim::AdamW({p}, {.eps = -1e-8}); }, {"eps"});
}

TEST_CASE("a step refuses a gradient whose dtype, shape or device is not its parameter's") {
  Tensor p = parameter({1, 2});
  optim::AdamW adamw({p}, {});
  p.mutable_grad() = from_vector<double>({1, 1}, {2});
  check_invalid_argument([&] { adamw.step(); },
                         {"parameter 0 is Tensor[2] Float cpu", "gradient is Tensor[2] Double"});
  p.mutable_grad() = from_vector<float>({1, 1, 1}, {3});
  check_invalid_argument([&] { adamw.step(); }, {"gradient is Tensor[3] Float"});
  p.mutable_grad() = from_vector<float>({1, 1}, {2}).to(coretest::fixture_device());
  check_invalid_argument([&] { adamw.step(); }, {"gradient is Tensor[2] Float fixture:0"});
  CHECK(adamw.state(0).step == 0);
  check_values(p, {1, 2});
}
