// Gradients of the view and copy ops and of cat, against finite differences.
#include "gradcheck.h"

using namespace gradtest;
using bp::Tensor;
using Args = std::vector<Tensor>;

TEST_CASE("views: view, reshape, permute, transpose, flatten, squeeze, unsqueeze, expand") {
  const Input input{{2, 3, 1}, Layout::Contiguous};
  gradcheck([](const Args& t) { return t[0].view({3, 2}) * 2; }, {input});
  gradcheck([](const Args& t) { return t[0].reshape({6}) * 2; }, {{{2, 3}, Layout::Transposed}});
  gradcheck([](const Args& t) { return t[0].permute({2, 0, 1}) * 2; }, {input});
  gradcheck([](const Args& t) { return t[0].transpose(0, 1) * 2; }, {input});
  gradcheck([](const Args& t) { return t[0].flatten() * 2; }, {input});
  gradcheck([](const Args& t) { return t[0].squeeze() * 2; }, {input});
  gradcheck([](const Args& t) { return t[0].squeeze(2) * 2; }, {input});
  gradcheck([](const Args& t) { return t[0].unsqueeze(1) * 2; }, {input});
  gradcheck([](const Args& t) { return t[0].expand({2, 2, 3, 4}) * 2; }, {input});
}

TEST_CASE("slice and select: the gradient lands in the chosen part, zero elsewhere") {
  const Input input{{4, 3}, Layout::Transposed};
  gradcheck([](const Args& t) { return t[0].slice(0, 1, 4, 2) * 2; }, {input});
  gradcheck([](const Args& t) { return t[0].slice(1, 1, 3) * 2; }, {input});
  gradcheck([](const Args& t) { return t[0].select(0, 2) * 2; }, {input});
  gradcheck([](const Args& t) { return t[0].select(-1, 0) * 2; }, {input});
}

TEST_CASE("copies: contiguous, clone and to(dtype) pass the gradient through") {
  const Input input{{2, 3}, Layout::Transposed};
  gradcheck([](const Args& t) { return t[0].contiguous() * 2; }, {input});
  gradcheck([](const Args& t) { return t[0].clone() * 2; }, {input});
  gradcheck([](const Args& t) { return t[0].to(bp::kFloat64) * 2; }, {input});
}

TEST_CASE("to(dtype): the gradient comes back in the input's dtype") {
  Tensor x = gradtest::tensor_of({1, 2, 3}, {3});
  x.requires_grad_();
  bp::sum(x.to(bp::kFloat32) * 2).backward();
  CHECK(x.grad().dtype() == bp::kFloat64);
  CHECK(x.grad().to_vector<double>() == std::vector<double>{2, 2, 2});
}

TEST_CASE("cat: each input gets its slice of the gradient") {
  gradcheck(
      [](const Args& t) {
        return bp::cat({t[0], t[1], t[2]}, 1);
      },
      {{{2, 1}}, {{2, 3}, Layout::Transposed}, {{2, 2}}});
  gradcheck([](const Args& t) { return bp::cat({t[0], t[1]}, 0); }, {{{1, 3}}, {{2, 3}}});
}

TEST_CASE("to(device): the gradient comes back to the input's device") {
  for (const bp::Device device : bp::devices()) {
    if (device == bp::Device::cpu()) continue;
    INFO("device " << device.str());
    gradcheck([&](const Args& t) { return (t[0].to(device) * 2).cpu(); },
              {{{2, 3}, Layout::Transposed}});
  }
}
