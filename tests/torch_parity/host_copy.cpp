#include "host_copy.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <stdexcept>

namespace torch_parity {

namespace {

torch::ScalarType torch_dtype(bp::DType dtype) {
  if (dtype == bp::kFloat32) return torch::kFloat32;
  if (dtype == bp::kInt64) return torch::kInt64;
  throw std::invalid_argument("to_torch copies Float32 and Int64 tensors, not " +
                              std::string(bp::dtype_name(dtype)));
}

std::vector<float> host_values(const torch::Tensor& tensor) {
  const torch::Tensor dense = tensor.detach().to(torch::kFloat32).contiguous();
  const float* first = dense.data_ptr<float>();
  return std::vector<float>(first, first + dense.numel());
}

}  // namespace

torch::Tensor to_torch(const bp::Tensor& tensor) {
  const bp::Tensor dense = tensor.detach().contiguous();
  const std::vector<int64_t> sizes(dense.sizes().begin(), dense.sizes().end());
  return torch::from_blob(dense.data_ptr(), sizes, torch_dtype(dense.dtype())).clone();
}

void copy_values(const std::vector<bp::Tensor>& from, const std::vector<torch::Tensor>& to) {
  REQUIRE(from.size() == to.size());
  const torch::NoGradGuard no_grad;
  for (size_t i = 0; i < from.size(); ++i) to[i].copy_(to_torch(from[i]));
}

void check_close(const std::string& what, const bp::Tensor& ours, const torch::Tensor& theirs) {
  INFO(what);
  REQUIRE(ours.defined());
  REQUIRE(theirs.defined());
  const std::vector<int64_t> our_sizes(ours.sizes().begin(), ours.sizes().end());
  REQUIRE(our_sizes == theirs.sizes().vec());
  const std::vector<float> a = ours.detach().contiguous().to_vector<float>();
  const std::vector<float> b = host_values(theirs);
  if (a.empty()) return;
  size_t worst = 0;
  double worst_excess = -INFINITY;
  for (size_t i = 0; i < a.size(); ++i) {
    const double difference = std::fabs(static_cast<double>(a[i]) - b[i]);
    const double allowed = kAbsoluteTolerance + kRelativeTolerance * std::fabs(b[i]);
    const double excess = std::isnan(difference) ? INFINITY : difference - allowed;
    if (excess > worst_excess) {
      worst_excess = excess;
      worst = i;
    }
  }
  INFO("worst element " << worst << ": Backplane " << a[worst] << ", libtorch " << b[worst]);
  CHECK(worst_excess <= 0);
}

}  // namespace torch_parity
