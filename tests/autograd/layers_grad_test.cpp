// Gradients of the neural-network layers, their composites and the losses, against finite
// differences. Their backward kernel ops (convolution_backward, native_batch_norm_backward, ...)
// are checked on every backend by the op tests (tests/ops).
#include "gradcheck.h"

using namespace gradtest;
using bp::Tensor;
using Args = std::vector<Tensor>;

namespace {
Tensor indices(std::vector<int64_t> values, std::vector<int64_t> sizes) {
  return bp::from_vector(values, sizes);
}
}  // namespace

TEST_CASE("activations: relu, gelu (both approximations)") {
  const Input input{{2, 3}, Layout::Transposed};
  gradcheck([](const Args& t) { return bp::relu(t[0]); }, {input});
  gradcheck([](const Args& t) { return bp::gelu(t[0]); }, {input});
  gradcheck([](const Args& t) { return bp::gelu(t[0], "tanh"); }, {input});
}

TEST_CASE("softmax and log_softmax over each dim") {
  const Input input{{2, 3, 2}, Layout::Transposed};
  for (int64_t dim : {0, 1, -1}) {
    gradcheck([&](const Args& t) { return bp::softmax(t[0], dim); }, {input});
    gradcheck([&](const Args& t) { return bp::log_softmax(t[0], dim); }, {input});
  }
}

TEST_CASE("layer_norm and rms_norm: input, weight and bias") {
  gradcheck([](const Args& t) { return bp::layer_norm(t[0], {3}, t[1], t[2]); },
            {{{4, 3}, Layout::Transposed}, {{3}}, {{3}}});
  gradcheck([](const Args& t) { return bp::layer_norm(t[0], {2, 3}); }, {{{2, 2, 3}}});
  gradcheck([](const Args& t) { return bp::rms_norm(t[0], {3}, t[1]); },
            {{{4, 3}, Layout::Strided}, {{3}}});
  gradcheck(
      [](const Args& t) {
        return bp::rms_norm(t[0], {2, 3}, std::nullopt, 1e-3);
      },
      {{{2, 2, 3}}});
}

TEST_CASE("batch_norm: batch statistics in training mode, running ones in eval mode") {
  const Tensor running_mean = tensor_of({0.1, -0.2}, {2});
  const Tensor running_var = tensor_of({0.5, 2.0}, {2});
  for (bool training : {true, false}) {
    gradcheck(
        [&](const Args& t) {
          // Training updates the statistics: each evaluation starts from the same ones.
          Tensor mean = running_mean.clone(), var = running_var.clone();
          return bp::batch_norm(t[0], t[1], t[2], mean, var, training, 0.1, 1e-5, false);
        },
        {{{3, 2, 2}}, {{2}}, {{2}}});
  }
}

TEST_CASE("conv2d: input, weight and bias, with stride, padding, dilation and groups") {
  gradcheck([](const Args& t) { return bp::conv2d(t[0], t[1], t[2]); },
            {{{1, 2, 4, 4}}, {{3, 2, 2, 2}}, {{3}}});
  gradcheck(
      [](const Args& t) {
        return bp::conv2d(t[0], t[1], t[2], {2, 1}, {1, 0}, {1, 2});
      },
      {{{2, 1, 5, 5}, Layout::Transposed}, {{2, 1, 3, 2}}, {{2}}});
  gradcheck([](const Args& t) { return bp::conv2d(t[0], t[1], std::nullopt, 1, 1, 1, 2); },
            {{{1, 4, 3, 3}}, {{2, 2, 3, 3}}});
}

TEST_CASE("pooling: max_pool2d, avg_pool2d, adaptive_avg_pool2d") {
  const Input input{{1, 2, 5, 5}, Layout::Transposed};
  gradcheck([](const Args& t) { return bp::max_pool2d(t[0], {2, 2}); }, {input});
  gradcheck(
      [](const Args& t) {
        return bp::max_pool2d(t[0], {3, 2}, {2, 1}, {1, 1}, 1, true);
      },
      {input});
  gradcheck(
      [](const Args& t) {
        return std::get<0>(bp::max_pool2d_with_indices(t[0], {2, 2}));
      },
      {input});
  gradcheck([](const Args& t) { return bp::avg_pool2d(t[0], {2, 2}); }, {input});
  gradcheck(
      [](const Args& t) {
        return bp::avg_pool2d(t[0], {3, 3}, {2, 2}, {1, 1}, true, false);
      },
      {input});
  gradcheck(
      [](const Args& t) {
        return bp::avg_pool2d(t[0], {2, 2}, {1, 1}, 0, false, true, 3);
      },
      {input});
  gradcheck([](const Args& t) { return bp::adaptive_avg_pool2d(t[0], {2, 3}); }, {input});
}

TEST_CASE("embedding and index_select: rows gathered more than once sum their gradients") {
  const Tensor ids = indices({2, 0, 2, 3}, {2, 2});
  gradcheck([&](const Args& t) { return bp::embedding(t[0], ids); }, {{{4, 3}}});
  // The padding row is gathered as any other, but gets no gradient (as PyTorch's).
  Tensor weight = tensor_of(sample_values(12, 3), {4, 3});
  weight.requires_grad_();
  bp::sum(bp::embedding(weight, ids, /*padding_idx=*/2)).backward();
  CHECK(weight.grad().to_vector<double>() ==
        std::vector<double>{1, 1, 1, 0, 0, 0, 0, 0, 0, 1, 1, 1});
  gradcheck(
      [&](const Args& t) {
        return bp::index_select(t[0], 1, indices({1, 1, 0}, {3}));
      },
      {{{2, 3}, Layout::Transposed}});
  gradcheck(
      [&](const Args& t) {
        return bp::index_add(t[0], 0, indices({1, 1, 0}, {3}), t[1], 2);
      },
      {{{2, 3}}, {{3, 3}}});
}

TEST_CASE("matrix products with a fused activation, and attention") {
  for (bool use_gelu : {false, true}) {
    gradcheck(
        [&](const Args& t) { return bp::_addmm_activation(t[0], t[1], t[2], 1, 1, use_gelu); },
        {{{3}}, {{2, 4}}, {{4, 3}, Layout::Transposed}});
  }
  for (bool causal : {false, true}) {
    gradcheck(
        [&](const Args& t) {
          return bp::scaled_dot_product_attention(t[0], t[1], t[2], std::nullopt, 0.0, causal);
        },
        {{{1, 2, 3, 4}}, {{1, 2, 3, 4}}, {{1, 2, 3, 2}}});
    // The fused kernel op itself, which the composite takes where the backend has it.
    gradcheck(
        [&](const Args& t) {
          return bp::_scaled_dot_product_fused_attention(t[0], t[1], t[2], causal, 0.5);
        },
        {{{2, 3, 4}, Layout::Transposed}, {{2, 3, 4}}, {{2, 3, 2}}});
  }
}

TEST_CASE("losses: cross_entropy_loss, nll_loss and mse_loss, every reduction") {
  const Tensor target = indices({2, 0, 1}, {3});
  for (int64_t reduction : {0, 1, 2}) {
    gradcheck([&](const Args& t) { return bp::cross_entropy_loss(t[0], target, {}, reduction); },
              {{{3, 4}, Layout::Transposed}});
    // The class weights are constants, as in PyTorch: they get no gradient.
    const Tensor weight = tensor_of({0.5, 1.0, 2.0, 1.5}, {4});
    gradcheck([&](const Args& t) { return bp::nll_loss(t[0], target, weight, reduction); },
              {{{3, 4}}});
    gradcheck([&](const Args& t) { return bp::mse_loss(t[0], t[1], reduction); },
              {{{2, 3}}, {{2, 3}, Layout::Strided}});
  }
  gradcheck(
      [&](const Args& t) {
        return bp::cross_entropy_loss(t[0], indices({2, -100, 1}, {3}), {}, 1, -100, 0.1);
      },
      {{{3, 4}}});
}
