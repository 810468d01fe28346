// Gradients of the reductions, against finite differences.
#include "gradcheck.h"

using namespace gradtest;
using bp::Tensor;
using Args = std::vector<Tensor>;

TEST_CASE("sum and mean: whole tensor, over dims, with and without keepdim") {
  const Input input{{2, 3, 2}, Layout::Transposed};
  gradcheck([](const Args& t) { return bp::sum(t[0]); }, {input});
  gradcheck([](const Args& t) { return bp::mean(t[0]); }, {input});
  for (bool keepdim : {false, true}) {
    gradcheck([&](const Args& t) { return bp::sum(t[0], {1}, keepdim); }, {input});
    gradcheck([&](const Args& t) { return bp::sum(t[0], {0, -1}, keepdim); }, {input});
    gradcheck([&](const Args& t) { return bp::mean(t[0], {-1}, keepdim); }, {input});
    gradcheck([&](const Args& t) { return bp::mean(t[0], {0, 2}, keepdim); }, {input});
  }
}

TEST_CASE("amax: the gradient goes to the maxima, split evenly between ties") {
  const Input input{{3, 4}, Layout::Strided};
  for (bool keepdim : {false, true}) {
    gradcheck([&](const Args& t) { return bp::amax(t[0], {1}, keepdim); }, {input});
    gradcheck([&](const Args& t) { return bp::amax(t[0], {}, keepdim); }, {input});
  }
  Tensor tied = gradtest::tensor_of({2, 2, 1}, {3});
  tied.requires_grad_();
  bp::sum(bp::amax(tied, {0})).backward();
  CHECK(tied.grad().to_vector<double>() == std::vector<double>{0.5, 0.5, 0});
}

TEST_CASE("max.dim: the gradient goes to the element the indices name") {
  const Input input{{3, 4}, Layout::Transposed};
  for (bool keepdim : {false, true}) {
    for (int64_t dim : {0, 1, -1}) {
      gradcheck([&](const Args& t) { return std::get<0>(bp::max(t[0], dim, keepdim)); }, {input});
    }
  }
}
