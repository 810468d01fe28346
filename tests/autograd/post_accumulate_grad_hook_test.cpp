// Post-accumulate-grad hooks: a leaf's hooks run once per backward pass that reaches it, right
// after its grad() holds the whole sum, so that a data-parallel wrapper can start reducing a
// parameter's gradient while the pass goes on to earlier layers.
#include "error_text.h"

#include <backplane/autograd.h>
#include <backplane/backplane.h>
#include <doctest/doctest.h>

#include <atomic>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

using bp::Tensor;

using autograd_test::contains;
using autograd_test::error_of;

namespace {

Tensor parameter(std::vector<float> values) {
  const auto count = static_cast<int64_t>(values.size());
  return bp::from_vector(std::move(values), {count}).requires_grad_();
}

}  // namespace

TEST_CASE("a hook runs once per backward pass, after the leaf's grad() holds the new sum") {
  Tensor w = parameter({1, 2, 3});
  std::vector<std::vector<float>> seen;
  w.register_post_accumulate_grad_hook(
      [&seen](Tensor& leaf) { seen.push_back(leaf.grad().to_vector<float>()); });

  bp::sum(w * 2).backward();
  REQUIRE(seen.size() == 1);
  CHECK(seen[0] == std::vector<float>{2, 2, 2});

  SUBCASE("a second pass adds to grad(), and the hook sees the total") {
    bp::sum(w * 3).backward();
    REQUIRE(seen.size() == 2);
    CHECK(seen[1] == std::vector<float>{5, 5, 5});
  }
  SUBCASE("a pass that does not reach the leaf runs none of its hooks") {
    Tensor other = parameter({1});
    bp::sum(other * 2).backward();
    CHECK(seen.size() == 1);
  }
}

TEST_CASE("a leaf reached by several paths runs its hooks once, after every path is summed") {
  Tensor w = parameter({1, 2});
  std::vector<std::vector<float>> seen;
  w.register_post_accumulate_grad_hook(
      [&seen](Tensor& leaf) { seen.push_back(leaf.grad().to_vector<float>()); });
  // Paths of different lengths: d/dw (2w + w*w) = 2 + 2w.
  bp::sum(w * 2 + bp::mul(w, w)).backward();
  REQUIRE(seen.size() == 1);
  CHECK(seen[0] == std::vector<float>{4, 6});

  SUBCASE("also when the paths start at different outputs of one backward()") {
    seen.clear();
    w.mutable_grad() = Tensor();
    bp::autograd::backward({bp::sum(w * 2), bp::sum(w * 3)});
    REQUIRE(seen.size() == 1);
    CHECK(seen[0] == std::vector<float>{5, 5});
  }
}

TEST_CASE("hooks belong to the leaf: every new forward's graph runs them") {
  Tensor w = parameter({1, 1});
  int calls = 0;
  w.register_post_accumulate_grad_hook([&calls](Tensor&) { ++calls; });
  std::weak_ptr<bp::autograd::Node> first_graph;
  for (int step = 0; step < 3; ++step) {
    const Tensor loss = bp::sum(bp::exp(w));
    if (step == 0) first_graph = loss.grad_fn();
    loss.backward();
    CHECK(calls == step + 1);
  }
  // The first graph, and the accumulator it made for w, are gone: the later passes ran hooks
  // that no graph of theirs was given.
  CHECK(first_graph.expired());
}

TEST_CASE("a hook runs as soon as its leaf is done, before the pass reaches earlier layers") {
  // What lets a data-parallel wrapper overlap a gradient's all-reduce with the rest of backward.
  Tensor w1 = parameter({1, 2});
  Tensor w2 = parameter({3, 4});
  bool w1_done_when_w2_hook_ran = true;
  w2.register_post_accumulate_grad_hook(
      [&](Tensor&) { w1_done_when_w2_hook_ran = w1.grad().defined(); });
  const Tensor x = bp::from_vector(std::vector<float>{1, 1}, {2});
  bp::sum(bp::relu(x * w1) * w2).backward();
  CHECK_FALSE(w1_done_when_w2_hook_ran);
  CHECK(w1.grad().defined());
}

TEST_CASE("several hooks run in the order registered, each seeing what the one before left") {
  Tensor w = parameter({1, 2});
  std::vector<std::string> log;
  w.register_post_accumulate_grad_hook([&log](Tensor& leaf) {
    log.push_back("first saw " + std::to_string(leaf.grad().to_vector<float>()[0]));
  });
  w.register_post_accumulate_grad_hook([&log](Tensor& leaf) {
    log.push_back("second scales");
    // Replacing grad() is allowed: a data-parallel wrapper puts the reduced gradient there.
    leaf.mutable_grad() = leaf.grad() * 10;
  });
  w.register_post_accumulate_grad_hook([&log](Tensor& leaf) {
    log.push_back("third saw " + std::to_string(leaf.grad().to_vector<float>()[0]));
  });
  bp::sum(w * 2).backward();
  CHECK(log == std::vector<std::string>{"first saw " + std::to_string(2.0f), "second scales",
                                        "third saw " + std::to_string(20.0f)});
  CHECK(w.grad().to_vector<float>() == std::vector<float>{20, 20});
}

TEST_CASE("a removed hook no longer runs") {
  Tensor w = parameter({1});
  std::vector<int> ran;
  bp::HookHandle first =
      w.register_post_accumulate_grad_hook([&ran](Tensor&) { ran.push_back(1); });
  bp::HookHandle second =
      w.register_post_accumulate_grad_hook([&ran](Tensor&) { ran.push_back(2); });
  w.register_post_accumulate_grad_hook([&ran](Tensor&) { ran.push_back(3); });
  second.remove();
  bp::sum(w * 2).backward();
  CHECK(ran == std::vector<int>{1, 3});

  SUBCASE("removing twice, or through an empty handle, does nothing more") {
    second.remove();
    bp::HookHandle().remove();
    first.remove();
    ran.clear();
    bp::sum(w * 2).backward();
    CHECK(ran == std::vector<int>{3});
  }
  SUBCASE("dropping a handle keeps its hook") {
    { const bp::HookHandle dropped = std::move(first); }
    ran.clear();
    bp::sum(w * 2).backward();
    CHECK(ran == std::vector<int>{1, 3});
  }
}

TEST_CASE("a hook may remove itself: it runs once, and the hooks after it still run") {
  Tensor w = parameter({1});
  std::vector<int> ran;
  auto once = std::make_shared<bp::HookHandle>();
  *once = w.register_post_accumulate_grad_hook([&ran, once](Tensor&) {
    ran.push_back(1);
    once->remove();
  });
  w.register_post_accumulate_grad_hook([&ran](Tensor&) { ran.push_back(2); });
  bp::sum(w * 2).backward();
  bp::sum(w * 2).backward();
  CHECK(ran == std::vector<int>{1, 2, 2});
}

TEST_CASE("a handle outlives its tensor without keeping it, and removes nothing then") {
  bp::HookHandle handle;
  auto watched = std::make_shared<int>(0);
  std::weak_ptr<int> capture = watched;
  {
    Tensor w = parameter({1});
    handle = w.register_post_accumulate_grad_hook([watched](Tensor&) { ++*watched; });
    watched.reset();
  }
  // The hook, and what it captured, went away with the tensor although the handle lives.
  CHECK(capture.expired());
  handle.remove();
}

TEST_CASE("only a leaf that requires grad takes a hook") {
  const auto hook = [](Tensor&) {};
  Tensor w = parameter({1, 2});

  const std::string not_leaf = error_of([&] { (w * 2).register_post_accumulate_grad_hook(hook); });
  CHECK(contains(not_leaf,
                 "register_post_accumulate_grad_hook: this tensor was made by "
                 "MulBackward0, so it is not a leaf"));
  CHECK(contains(not_leaf, "register the hook on the leaf"));

  const std::string no_grad = error_of([&] {
    bp::from_vector(std::vector<float>{1}, {1}).register_post_accumulate_grad_hook(hook);
  });
  CHECK(contains(no_grad, "this tensor does not require grad"));
  CHECK(contains(no_grad, "call requires_grad_() on it first"));

  Tensor switched_off = parameter({1});
  switched_off.requires_grad_(false);
  CHECK(contains(error_of([&] { switched_off.register_post_accumulate_grad_hook(hook); }),
                 "does not require grad"));

  CHECK(contains(error_of([&] { w.register_post_accumulate_grad_hook(nullptr); }),
                 "the hook is an empty std::function; pass a callable"));
  CHECK(contains(error_of([] { Tensor().register_post_accumulate_grad_hook([](Tensor&) {}); }),
                 "register_post_accumulate_grad_hook() called on an undefined bp::Tensor"));
}

TEST_CASE("an exception from a hook reaches the caller of backward(), and no lock stays held") {
  Tensor w = parameter({1, 2});
  int calls = 0;
  w.register_post_accumulate_grad_hook([&calls](Tensor&) {
    if (++calls == 1) throw std::runtime_error("the all-reduce failed");
  });
  int later_calls = 0;
  w.register_post_accumulate_grad_hook([&later_calls](Tensor&) { ++later_calls; });

  const std::string message = error_of([&] { bp::sum(w * 2).backward(); });
  CHECK(contains(message,
                 "backward of AccumulateGrad failed: a post-accumulate-grad hook of "
                 "the leaf Tensor[2] Float cpu threw: the all-reduce failed"));
  // The gradient was added before the hooks ran; the hooks after the failing one did not run.
  CHECK(w.grad().to_vector<float>() == std::vector<float>{2, 2});
  CHECK(later_calls == 0);
  CHECK(bp::is_grad_enabled());

  // The next pass accumulates and runs every hook: the failure left the accumulator unlocked.
  bp::sum(w * 3).backward();
  CHECK(w.grad().to_vector<float>() == std::vector<float>{5, 5});
  CHECK(calls == 2);
  CHECK(later_calls == 1);
}

TEST_CASE("hooks run with grad mode off, as the whole backward pass does") {
  Tensor w = parameter({1, 2});
  bool grad_mode_in_hook = true;
  bool recorded_in_hook = true;
  w.register_post_accumulate_grad_hook([&](Tensor& leaf) {
    grad_mode_in_hook = bp::is_grad_enabled();
    recorded_in_hook = (leaf * 2).requires_grad();
  });
  REQUIRE(bp::is_grad_enabled());
  bp::sum(w * 2).backward();
  CHECK_FALSE(grad_mode_in_hook);
  CHECK_FALSE(recorded_in_hook);
  CHECK(bp::is_grad_enabled());  // backward() restores the caller's mode
}

TEST_CASE("autograd::grad accumulates nothing, so it runs no hooks") {
  Tensor w = parameter({1, 2});
  int calls = 0;
  w.register_post_accumulate_grad_hook([&calls](Tensor&) { ++calls; });
  const std::vector<Tensor> gradients = bp::autograd::grad({bp::sum(w * 2)}, {w});
  CHECK(gradients[0].to_vector<float>() == std::vector<float>{2, 2});
  CHECK(calls == 0);
}

TEST_CASE("backward passes on several threads each run a shared parameter's hooks") {
  // Data parallelism on threads: every pass runs the hooks once, after its own addition
  // (ThreadSanitizer checks the hooks' list and grad() under these passes: make tsan).
  Tensor w = parameter({1, 2});
  constexpr int kThreads = 2;
  constexpr int kSteps = 50;
  std::atomic<int> calls{0};
  w.register_post_accumulate_grad_hook([&calls](Tensor&) { ++calls; });
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&w] {
      for (int step = 0; step < kSteps; ++step) bp::sum(w * 2).backward();
    });
  }
  for (std::thread& thread : threads) thread.join();
  CHECK(calls == kThreads * kSteps);
  CHECK(w.grad().to_vector<float>() == std::vector<float>(2, 2 * kThreads * kSteps));
}
