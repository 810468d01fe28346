// The negative log-likelihood loss (nll_loss_forward, nll_loss_backward and the nll_loss
// composite), cross_entropy_loss and mse_loss: every reduction, class weights, ignore_index.
#include "op_test_support.h"

#include <cmath>
#include <tuple>

namespace optest {
namespace {

struct NllReference {
  Values losses;  // per sample, 0 where ignored
  double total_weight;
};

NllReference nll_reference(const Values& x, int64_t classes, const std::vector<int64_t>& target,
                           const Values* weight, int64_t ignore_index) {
  NllReference r{{}, 0};
  for (size_t i = 0; i < target.size(); ++i) {
    const int64_t t = target[i];
    if (t == ignore_index) {
      r.losses.push_back(0);
      continue;
    }
    const double w = weight ? (*weight)[static_cast<size_t>(t)] : 1;
    r.losses.push_back(-w * x[i * static_cast<size_t>(classes) + static_cast<size_t>(t)]);
    r.total_weight += w;
  }
  return r;
}

double sum_of(const Values& values) {
  double sum = 0;
  for (const double v : values) sum += v;
  return sum;
}

}  // namespace

TEST_CASE("nll_loss_forward and nll_loss_backward, for every reduction, weight and dtype") {
  const int64_t samples = 5, classes = 4;
  const std::vector<int64_t> target = {3, 0, -100, 1, 3};
  for (const Device device : test_devices("nll_loss_forward.output")) {
    for (const DType dtype : declared_dtypes<kernel_dtypes::nll_loss_forward_output,
                                             kernel_dtypes::nll_loss_backward_grad_input>()) {
      for (const Layout layout : kAllLayouts) {
        for (const bool weighted : {false, true}) {
          for (const int64_t reduction : {0, 1, 2}) {
            INFO(device.str() << " " << name_of(dtype) << " " << name_of(layout) << " weight "
                              << weighted << " reduction " << reduction);
            const Tensor self = sample_tensor({samples, classes}, dtype, layout, 120, device);
            const Tensor targets = make_tensor(Values(target.begin(), target.end()), {samples},
                                               bp::kInt64, device);
            const Values w = {0.5, 1, 2, 0.25};
            const std::optional<Tensor> weight =
                weighted ? std::optional(make_tensor(w, {classes}, dtype, device)) : std::nullopt;
            const NllReference r =
                nll_reference(values_of(self), classes, target, weighted ? &w : nullptr, -100);
            const auto [loss, total_weight] =
                bp::nll_loss_forward(self, targets, weight, reduction, -100);
            if (reduction == 0) {
              check_tensor(loss, {samples}, dtype, r.losses);
              check_tensor(total_weight, {}, dtype, {0});
            } else {
              const double sum = sum_of(r.losses);
              check_tensor(loss, {}, dtype, {reduction == 1 ? sum / r.total_weight : sum});
              check_tensor(total_weight, {}, dtype, {r.total_weight});
            }
            const Shape grad_shape = reduction == 0 ? Shape{samples} : Shape{};
            const Tensor grad = sample_tensor(grad_shape, dtype, Layout::Contiguous, 121, device);
            const Values g = values_of(grad);
            Values expected(static_cast<size_t>(samples * classes));
            for (size_t i = 0; i < target.size(); ++i) {
              if (target[i] == -100) continue;
              const double class_weight = weighted ? w[static_cast<size_t>(target[i])] : 1;
              const double gradient = reduction == 0   ? g[i]
                                      : reduction == 1 ? g[0] / r.total_weight
                                                       : g[0];
              expected[i * classes + static_cast<size_t>(target[i])] = -class_weight * gradient;
            }
            check_tensor(bp::nll_loss_backward(grad, self, targets, weight, reduction, -100,
                                               total_weight),
                         {samples, classes}, dtype, expected);
          }
        }
      }
    }
  }
}

TEST_CASE("nll_loss of one sample without a batch dim, and of every sample ignored") {
  for (const Device device : test_devices("nll_loss_forward.output")) {
    const Tensor self = make_tensor({-1, -2, -3}, {3}, bp::kFloat32, device);
    const Tensor target = make_tensor({2}, {}, bp::kInt64, device);
    check_tensor(bp::nll_loss(self, target, std::nullopt, 0), {}, bp::kFloat32, {3});
    check_tensor(bp::nll_loss(self, target), {}, bp::kFloat32, {3});
    check_tensor(bp::nll_loss_backward(make_tensor({2}, {}, bp::kFloat32, device), self, target,
                                       std::nullopt, 2, -100,
                                       make_tensor({1}, {}, bp::kFloat32, device)),
                 {3}, bp::kFloat32, {0, 0, -2});
    INFO("the mean of nothing is 0 / 0, as in PyTorch");
    const Tensor ignored = make_tensor({-100, -100}, {2}, bp::kInt64, device);
    check_tensor(bp::nll_loss(bp::zeros({2, 3}, bp::kFloat32, device), ignored), {},
                 bp::kFloat32, {std::nan("")});
    check_tensor(bp::nll_loss(bp::zeros({2, 3}, bp::kFloat32, device), ignored, std::nullopt, 2),
                 {}, bp::kFloat32, {0});
  }
}

TEST_CASE("nll_loss by hand: mean, sum, none, class weights and ignore_index") {
  for (const Device device : test_devices("nll_loss_forward.output")) {
    const Tensor self = make_tensor({-1, -2, -3, -4}, {2, 2}, bp::kFloat64, device);
    const Tensor target = make_tensor({1, 0}, {2}, bp::kInt64, device);
    check_tensor(bp::nll_loss(self, target), {}, bp::kFloat64, {2.5});
    check_tensor(bp::nll_loss(self, target, std::nullopt, 2), {}, bp::kFloat64, {5});
    check_tensor(bp::nll_loss(self, target, std::nullopt, 0), {2}, bp::kFloat64, {2, 3});
    const Tensor weight = make_tensor({1, 3}, {2}, bp::kFloat32, device);
    check_tensor(bp::nll_loss(self, target, weight), {}, bp::kFloat64, {(3 * 2 + 1 * 3) / 4.0});
    check_tensor(bp::nll_loss(self, target, std::nullopt, 1, 1), {}, bp::kFloat64, {3});
  }
}

TEST_CASE("cross_entropy_loss by hand: log_softmax then nll_loss, with label smoothing") {
  for (const Device device : test_devices("nll_loss_forward.output")) {
    // Probabilities 1/4 and 3/4.
    const double ln3 = std::log(3.0), ln4 = std::log(4.0);
    const Tensor logits = make_tensor({0, ln3, 0, ln3}, {2, 2}, bp::kFloat64, device);
    const Tensor target = make_tensor({0, 1}, {2}, bp::kInt64, device);
    check_tensor(bp::cross_entropy_loss(logits, target), {}, bp::kFloat64,
                 {(ln4 + (ln4 - ln3)) / 2});
    check_tensor(bp::cross_entropy_loss(logits, target, std::nullopt, 0), {2}, bp::kFloat64,
                 {ln4, ln4 - ln3});
    INFO("smoothing 0.2 over 2 classes: 0.8 nll + 0.1 (-sum of the log-probabilities)");
    const double smooth = ln4 + (ln4 - ln3);
    check_tensor(bp::cross_entropy_loss(logits, target, std::nullopt, 2, -100, 0.2), {},
                 bp::kFloat64, {0.8 * (ln4 + ln4 - ln3) + 0.1 * 2 * smooth});
    INFO("an ignored sample adds nothing, and the mean is over the others");
    const Tensor one_ignored = make_tensor({0, -100}, {2}, bp::kInt64, device);
    check_tensor(bp::cross_entropy_loss(logits, one_ignored, std::nullopt, 1, -100, 0.2), {},
                 bp::kFloat64, {0.8 * ln4 + 0.1 * smooth});
    INFO("class weights 2 and 1: the smooth term weighs each class, the mean divides by 2");
    const Tensor weight = make_tensor({2, 1}, {2}, bp::kFloat64, device);
    check_tensor(bp::cross_entropy_loss(logits, one_ignored, weight, 1, -100, 0.2), {},
                 bp::kFloat64, {0.8 * ln4 + 0.1 * (2 * ln4 + (ln4 - ln3)) / 2});
    INFO("a single sample without a batch dim");
    check_tensor(bp::cross_entropy_loss(make_tensor({0, ln3}, {2}, bp::kFloat64, device),
                                        make_tensor({1}, {}, bp::kInt64, device)),
                 {}, bp::kFloat64, {ln4 - ln3});
  }
}

TEST_CASE("mse_loss by hand: the squared differences, their mean or their sum") {
  for (const Device device : test_devices()) {
    const Tensor self = make_tensor({1, 2, 3}, {3}, bp::kFloat32, device);
    const Tensor target = make_tensor({0, 0, 5}, {3}, bp::kFloat32, device);
    check_tensor(bp::mse_loss(self, target), {}, bp::kFloat32, {3});
    check_tensor(bp::mse_loss(self, target, 2), {}, bp::kFloat32, {9});
    check_tensor(bp::mse_loss(self, target, 0), {3}, bp::kFloat32, {1, 4, 4});
    check_tensor(bp::mse_loss(make_tensor({1, 2}, {2, 1}, bp::kFloat32, device), target, 0),
                 {2, 3}, bp::kFloat32, {1, 1, 16, 4, 4, 9});
  }
}

}  // namespace optest
