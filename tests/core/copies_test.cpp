// Copies: contiguous, clone, dtype conversion, moves between devices and reading values back.
#include "core_test_support.h"

using namespace bp;
using coretest::check_invalid_argument;
using coretest::fixture_device;
using coretest::fixture_device_memory_device;

namespace {

bool shares_storage(const Tensor& a, const Tensor& b) {
  return a.impl()->storage().get() == b.impl()->storage().get();
}

}  // namespace

TEST_CASE("contiguous returns the tensor itself when it already is") {
  const Tensor t = from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  CHECK(t.contiguous().impl() == t.impl());
  const Tensor c = t.transpose(0, 1).contiguous();
  CHECK(c.is_contiguous());
  CHECK(c.to_vector<float>() == std::vector<float>{1, 4, 2, 5, 3, 6});
}

TEST_CASE("clone copies into new storage") {
  const Tensor t = from_vector<int32_t>({1, 2, 3}, {3});
  Tensor c = t.clone();
  CHECK_FALSE(shares_storage(c, t));
  c.fill_(0);
  CHECK(t.to_vector<int32_t>() == std::vector<int32_t>{1, 2, 3});
}

TEST_CASE("to(dtype) converts through the copy kernel") {
  const Tensor t = from_vector<float>({1.75f, -2.5f, 0.0f}, {3});
  CHECK(t.to(kFloat32).impl() == t.impl());
  CHECK(t.to(kInt32).to_vector<int32_t>() == std::vector<int32_t>{1, -2, 0});
  CHECK(t.to(kBool).to_vector<bool>() == std::vector<bool>{true, true, false});
  CHECK(t.to(kFloat64).to_vector<double>() == std::vector<double>{1.75, -2.5, 0.0});
  CHECK(t.transpose(0, 0).to(kFloat16).to_vector<Half>()[0] == Half(1.75f));
}

TEST_CASE("to(device) moves values between the host and devices with their own memory") {
  const Device device = fixture_device_memory_device();
  const Tensor host = from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  const Tensor there = host.transpose(0, 1).to(device);  // staged through a contiguous copy
  CHECK(there.device() == device);
  CHECK(there.is_contiguous());
  const Tensor back = there.cpu();
  CHECK(back.device() == Device::cpu());
  CHECK(back.to_vector<float>() == std::vector<float>{1, 4, 2, 5, 3, 6});
  CHECK(there.to(device).impl() == there.impl());
  CHECK(there.to_vector<float>() == std::vector<float>{1, 4, 2, 5, 3, 6});
}

TEST_CASE("to(device) moves between two backends") {
  const Tensor host = from_vector<int64_t>({7, 8, 9}, {3});
  const Tensor on_fixture = host.to(fixture_device());
  CHECK(on_fixture.device() == fixture_device());
  const Tensor on_device_memory = on_fixture.to(fixture_device_memory_device());
  CHECK(on_device_memory.device() == fixture_device_memory_device());
  CHECK(on_device_memory.to(fixture_device()).to_vector<int64_t>() ==
        std::vector<int64_t>{7, 8, 9});
  CHECK(host.slice(0, 1, 3).to(fixture_device_memory_device()).to_vector<int64_t>() ==
        std::vector<int64_t>{8, 9});
}

TEST_CASE("to_vector and item check the element type and name both types") {
  const Tensor t = from_vector<int64_t>({1, 2}, {2});
  check_invalid_argument([&] { t.to_vector<float>(); },
                         {"to_vector<float>", "dtype is Long", "int64_t", ".to(bp::kFloat32)"});
  check_invalid_argument([] { scalar_tensor(1, kFloat32).item<int32_t>(); },
                         {"item<int32_t>", "dtype is Float", "float"});
  check_invalid_argument([&] { t.item<int64_t>(); }, {"item", "2 elements", "exactly one"});
  CHECK(t.select(0, 1).item<int64_t>() == 2);
}
