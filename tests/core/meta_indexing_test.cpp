// The gradients of the index ops: embedding_dense_backward and index_add check their indices,
// shapes and dtypes.
#include "core_test_support.h"

using namespace bp;
using coretest::check_invalid_argument;
using coretest::shape_of;
using Shape = std::vector<int64_t>;

TEST_CASE("embedding_dense_backward gives (num_weights, embedding_dim) rows of grad's dtype") {
  const Tensor indices = from_vector<int32_t>({0, 2, 2}, {3});
  const Tensor grad = ones({3, 4}, kFloat64);
  const Tensor out = embedding_dense_backward(grad, indices, 5, -1, false);
  CHECK(shape_of(out) == Shape{5, 4});
  CHECK(out.dtype() == kFloat64);
  check_invalid_argument([&] { embedding_dense_backward(ones({3, 4}), indices, 5, 5, false); },
                         {"embedding_dense_backward: padding_idx 5 is out of range for 5 "
                          "embeddings"});
  check_invalid_argument([&] { embedding_dense_backward(ones({2, 4}), indices, 5, -1, false); },
                         {"expected grad_output of shape [*indices.shape, embedding_dim], with "
                          "indices of shape [3], but got grad_output of shape [2, 4]"});
  check_invalid_argument(
      [&] { embedding_dense_backward(grad, indices.to(kFloat32), 5, -1, false); },
      {"embedding_dense_backward: expected indices of dtype Long or Int, got Float"});
  check_invalid_argument([&] { embedding_dense_backward(grad, indices, -1, -1, false); },
                         {"num_weights must not be negative, got -1"});
  check_invalid_argument([&] { embedding_dense_backward(grad, indices, 2, -1, false); },
                         {"index 2 is out of range for a dimension of size 2"});
}

TEST_CASE("index_add takes a source shaped like self but along dim, and an index of 0 or 1 dims") {
  const Tensor self = zeros({2, 3});
  const Tensor index = from_vector<int64_t>({2, 0, 2, 1}, {4});
  CHECK(shape_of(index_add(self, 1, index, ones({2, 4}))) == Shape{2, 3});
  CHECK(shape_of(self.index_add(-2, from_vector<int64_t>({1}, {}), ones({1, 3}))) == Shape{2, 3});
  CHECK(shape_of(index_add(zeros({}), 0, from_vector<int64_t>({0}, {1}), ones({1}))).empty());
  check_invalid_argument([&] { index_add(self, 1, index, ones({2, 3})); },
                         {"index_add: expected source of shape [2, 4] (self's shape with dim 1 "
                          "holding one slice per index), but got source of shape [2, 3]"});
  check_invalid_argument([&] { index_add(self, 1, index.view({2, 2}), ones({2, 4})); },
                         {"expected a 0-D or 1-D index, got shape [2, 2]"});
  check_invalid_argument([&] { index_add(self, 2, index, ones({2, 4})); },
                         {"out of range"});
  check_invalid_argument([&] { index_add(self, 1, index, ones({2, 4}, kFloat64)); },
                         {"index_add: source has dtype Double but the input has Float"});
  check_invalid_argument(
      [&] { index_add(zeros({2, 3}, kInt32), 1, index, ones({2, 4}, kInt32), 0.5); },
      {"index_add: for an integer self (Int), alpha must be an integer"});
  check_invalid_argument([&] { index_add(self, 1, from_vector<int64_t>({3}, {1}), ones({2, 1})); },
                         {"index_add: index 3 is out of range for a dimension of size 3"});
}
