// BACKPLANE_FALLBACK: an op that the tensors' backend lacks is an error that suggests the
// fallback, or, with BACKPLANE_FALLBACK=cpu, runs on the host and leaves its results on the
// device. The fixture device keeps host memory and implements add.out alone; the other fixture
// has memory of its own, which only its copy functions reach, and no kernel at all. The cases for
// each setting check the variable and end early under the other; ctest runs this file once more
// with it set to cpu.
#include "core_test_support.h"

#include <string>

using namespace bp;
using coretest::check_error;
using coretest::falls_back_to_cpu;

TEST_CASE("without BACKPLANE_FALLBACK=cpu, an op the backend lacks is an error that suggests it") {
  if (falls_back_to_cpu()) return;
  const Tensor a = ones({2}).to(coretest::fixture_device());
  check_error([&] { mul(a, a); }, ErrorCode::NotImplemented,
              {"mul.out has no kernel for device fixture:0", "set BACKPLANE_FALLBACK=cpu"});
}

TEST_CASE(
    "with BACKPLANE_FALLBACK=cpu, ops the backend lacks run on the host, results on the device") {
  if (!falls_back_to_cpu()) return;
  for (const Device device :
       {coretest::fixture_device(), coretest::fixture_device_memory_device()}) {
    INFO(device.str());
    const Tensor a = from_vector<float>({1, -2, 3, -4, 5, -6}, {2, 3}).to(device);
    const Tensor b = from_vector<float>({2, 2, 2, 3, 3, 3}, {2, 3}).to(device);

    const Tensor product = mul(a, b);
    CHECK(product.device() == device);
    CHECK(product.to_vector<float>() == std::vector<float>{2, -4, 6, -12, 15, -18});

    INFO("two outputs, read back from the device");
    const auto [values, indices] = max(a, 1);
    CHECK(values.device() == device);
    CHECK(values.to_vector<float>() == std::vector<float>{3, 5});
    CHECK(indices.to_vector<int64_t>() == std::vector<int64_t>{2, 1});

    INFO("a tensor list, and an optional tensor");
    CHECK(cat({a, b}, 0).to_vector<float>() ==
          std::vector<float>{1, -2, 3, -4, 5, -6, 2, 2, 2, 3, 3, 3});
    const Tensor normalized = rms_norm(a, {3}, ones({3}).to(device), 0.0);
    CHECK(normalized.device() == device);
    CHECK(normalized.to_vector<float>() ==
          rms_norm(a.cpu(), {3}, ones({3}), 0.0).to_vector<float>());

    INFO("in place: the host reads the device's values and writes them back");
    Tensor accumulator = from_vector<float>({1, -2, 3, -4, 5, -6}, {2, 3}).to(device);
    accumulator.mul_(b);
    CHECK(accumulator.to_vector<float>() == std::vector<float>{2, -4, 6, -12, 15, -18});

    INFO("add: the fixture's own kernel, or the host's for the one with no kernels");
    CHECK(add(a, b).to_vector<float>() == std::vector<float>{3, 0, 5, -1, 8, -3});
  }
}

TEST_CASE("with BACKPLANE_FALLBACK=cpu, copy_ does not fall back: it is how tensors cross") {
  if (!falls_back_to_cpu()) return;
  const Tensor a = from_vector<float>({1, 2, 3, 4}, {2, 2}).to(coretest::fixture_device());
  // A transposed view is not contiguous: making it so needs the device's copy_ kernel.
  try {
    a.transpose(0, 1).contiguous();
    FAIL("copy_ ran on a device whose backend lacks it");
  } catch (const Error& error) {
    const std::string message = error.what();
    CHECK(error.code() == ErrorCode::NotImplemented);
    CHECK(message.find("copy_ has no kernel for device fixture:0") != std::string::npos);
    CHECK(message.find("or use a plugin that implements it") != std::string::npos);
    CHECK(message.find("BACKPLANE_FALLBACK") == std::string::npos);  // it would not help
  }
}
