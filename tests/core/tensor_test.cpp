// Tensor metadata: sizes and strides with negative dims, contiguity, data_ptr and str().
#include "core_test_support.h"

using namespace bp;
using coretest::check_invalid_argument;

TEST_CASE("size and stride take negative dims and name the valid range when out of it") {
  const Tensor t = empty({2, 3, 4});
  CHECK(t.size(0) == 2);
  CHECK(t.size(-1) == 4);
  CHECK(t.stride(-3) == 12);
  CHECK(t.stride(2) == 1);
  CHECK(t.numel() == 24);
  check_invalid_argument([&] { t.size(3); },
                         {"size: dim 3 is out of range for a tensor of 3 dims (expected -3..2)"});
  check_invalid_argument([&] { t.stride(-4); }, {"stride: dim -4", "expected -3..2"});
  check_invalid_argument([] { empty({}).size(0); }, {"no dimensions"});
}

TEST_CASE("is_contiguous follows the strides, ignoring size-1 dims and empty tensors") {
  const Tensor t = empty({2, 3});
  CHECK(t.is_contiguous());
  CHECK_FALSE(t.transpose(0, 1).is_contiguous());
  CHECK(t.slice(0, 0, 1).is_contiguous());  // one row
  CHECK_FALSE(t.slice(1, 0, 2).is_contiguous());
  CHECK(t.unsqueeze(0).is_contiguous());
  CHECK(empty({0, 3}).transpose(0, 1).is_contiguous());
  CHECK_FALSE(empty({3}).expand({2, 3}).is_contiguous());
}

TEST_CASE("data_ptr points at the first element of the view") {
  Tensor t = from_vector<float>({0, 1, 2, 3, 4, 5}, {2, 3});
  CHECK(*t.data_ptr<float>() == 0.0f);
  CHECK(*t.select(0, 1).data_ptr<float>() == 3.0f);
  CHECK(*t.slice(1, 2, 3).data_ptr<float>() == 2.0f);
  *t.select(0, 1).select(0, 1).data_ptr<float>() = 40.0f;
  CHECK(t.data_ptr<float>()[4] == 40.0f);
}

TEST_CASE("data_ptr of a tensor on another device says to move it to the host") {
  const Tensor t = empty({2}, kFloat32, coretest::fixture_device_memory_device());
  check_invalid_argument([&] { t.data_ptr(); },
                         {"fixture_device_memory:0", "only host tensors", ".cpu()"});
}

TEST_CASE("str names shape, dtype and device") {
  CHECK(empty({2, 3}).str() == "Tensor[2, 3] Float cpu");
  CHECK(empty({}, kInt64).str() == "Tensor[] Long cpu");
  CHECK(Tensor().str() == "Tensor(undefined)");
}

TEST_CASE("an undefined tensor refuses every method but defined() and str()") {
  const Tensor undefined;
  CHECK_FALSE(undefined.defined());
  CHECK(undefined.str() == "Tensor(undefined)");
  check_invalid_argument([&] { (void)undefined.dim(); },
                         {"dim() called on an undefined bp::Tensor (default-constructed, or moved "
                          "from): assign it a tensor first"});
  check_invalid_argument([&] { (void)undefined.numel(); }, {"numel() called"});
  check_invalid_argument([&] { (void)undefined.dtype(); }, {"dtype() called"});
  check_invalid_argument([&] { (void)undefined.sizes(); }, {"sizes() called"});
  check_invalid_argument([&] { (void)undefined.to_vector<float>(); }, {"undefined bp::Tensor"});
  check_invalid_argument([&] { (void)undefined.cpu(); }, {"undefined bp::Tensor"});
  check_invalid_argument([&] { (void)undefined.view({1}); }, {"undefined bp::Tensor"});
  check_invalid_argument([&] { (void)undefined.data_ptr(); }, {"undefined bp::Tensor"});
}
