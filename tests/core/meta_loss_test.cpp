// nll_loss's kernels and the loss composites: shapes of self, target and weight, reductions.
#include "core_test_support.h"

#include <tuple>

using namespace bp;
using coretest::check_invalid_argument;
using coretest::shape_of;
using Shape = std::vector<int64_t>;

TEST_CASE("nll_loss_forward gives a loss per sample without reduction, else one, and a weight") {
  const Tensor log_probabilities = zeros({3, 4});
  const Tensor target = from_vector<int64_t>({0, 3, 1}, {3});
  const auto [losses, none_weight] = nll_loss_forward(log_probabilities, target, {}, 0, -100);
  CHECK(shape_of(losses) == Shape{3});
  CHECK(shape_of(none_weight).empty());
  const auto [loss, total_weight] = nll_loss_forward(log_probabilities, target, {}, 1, -100);
  CHECK(shape_of(loss).empty());
  CHECK(shape_of(std::get<0>(nll_loss_forward(zeros({4}), from_vector<int64_t>({2}, {}), {}, 0,
                                              -100)))
            .empty());
  CHECK(shape_of(nll_loss_backward(ones({3}), log_probabilities, target, {}, 0, -100,
                                   total_weight)) == Shape{3, 4});
}

TEST_CASE("nll_loss refuses targets, weights and reductions that do not fit self") {
  const Tensor self = zeros({3, 4});
  const Tensor target = from_vector<int64_t>({0, 3, 1}, {3});
  check_invalid_argument([&] { nll_loss(zeros({2, 3, 4}), target); },
                         {"nll_loss_forward: expected self of 1 or 2 dims ([C] or [N, C]), got "
                          "shape [2, 3, 4]"});
  check_invalid_argument([&] { nll_loss(self, from_vector<int64_t>({0, 1}, {2})); },
                         {"expected target of shape [3] (one class index per row of self, of "
                          "shape [3, 4]), got shape [2]"});
  check_invalid_argument([&] { nll_loss(zeros({4}), target); },
                         {"expected target of shape [] (one class index per row"});
  check_invalid_argument([&] { nll_loss(self, target.to(kFloat32)); },
                         {"expected target of dtype Long or Int, got Float"});
  check_invalid_argument([&] { nll_loss(self, target, ones({3})); },
                         {"expected weight with one value per class (4), got shape [3]"});
  check_invalid_argument([&] { nll_loss(self, target, std::nullopt, 3); },
                         {"nll_loss_forward: reduction must be 0 (none), 1 (mean) or 2 (sum), "
                          "got 3"});
  check_invalid_argument([&] { nll_loss(self, from_vector<int64_t>({0, 4, 1}, {3})); },
                         {"nll_loss_forward: target 4 is out of bounds for 4 classes"});
  check_invalid_argument(
      [&] { nll_loss_backward(ones({3}), self, target, {}, 1, -100, ones({})); },
      {"nll_loss_backward: expected grad_output of the loss's shape [], got shape [3]"});
  check_invalid_argument(
      [&] { nll_loss_backward(ones({}), self, target, {}, 1, -100, ones({2})); },
      {"expected total_weight of one element, got shape [2]"});
}

TEST_CASE("cross_entropy_loss and mse_loss refuse what PyTorch refuses") {
  check_invalid_argument(
      [] { cross_entropy_loss(zeros({2, 3}), from_vector<int64_t>({0, 1}, {2}), {}, 1, -100, 2); },
      {"cross_entropy_loss: label_smoothing must be in [0, 1], got 2"});
  check_invalid_argument([] { mse_loss(zeros({2}), zeros({2}), -1); },
                         {"mse_loss: reduction must be 0 (none), 1 (mean) or 2 (sum), got -1"});
  check_invalid_argument([] { mse_loss(zeros({2}), zeros({3})); }, {"[2]", "[3]"});
}
