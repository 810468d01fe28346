// Devices: parsing "type:index" through the registry, printing, and device agreement in ops.
#include "core_test_support.h"

using namespace bp;
using coretest::check_invalid_argument;
using coretest::fixture_device;

TEST_CASE("the host parses as cpu and prints as cpu") {
  CHECK(Device("cpu") == Device::cpu());
  CHECK(Device("cpu:0") == Device::cpu());
  CHECK(Device::cpu().type_name() == "cpu");
  CHECK(Device::cpu().str() == "cpu");
}

TEST_CASE("a loaded backend's devices parse with and without an index") {
  const Device device = fixture_device();
  CHECK(device.type() != Device::kHostType);
  CHECK(Device("fixture:0") == device);
  CHECK(device.type_name() == "fixture");
  CHECK(device.str() == "fixture:0");
}

TEST_CASE("bad device strings say what is wrong") {
  fixture_device();
  check_invalid_argument([] { Device("cuda:x"); },
                         {"invalid device string 'cuda:x'", "such as 'cpu', 'cuda' or 'cuda:1'"});
  check_invalid_argument([] { Device("cpu:"); }, {"invalid device string 'cpu:'"});
  check_invalid_argument([] { Device(":0"); }, {"invalid device string ':0'"});
  check_invalid_argument([] { Device("cpu:00"); }, {"invalid device string 'cpu:00'"});
  check_invalid_argument([] { Device("cpu:-1"); }, {"invalid device string 'cpu:-1'"});
  check_invalid_argument([] { Device("tpu:0"); }, {"unknown device type 'tpu' in 'tpu:0'",
                                                   "loaded backends are", "fixture", "bp-info"});
  check_invalid_argument(
      [] { Device("fixture:1"); },
      {"device index 1 is out of range in 'fixture:1'", "1 device(s)", "fixture:0..fixture:0"});
  check_invalid_argument([] { Device("cpu:3"); }, {"device index 3", "cpu"});
}

TEST_CASE("ops refuse tensors on two devices and name both") {
  const Tensor on_host = ones({2});
  const Tensor elsewhere = ones({2}).to(fixture_device());
  check_invalid_argument([&] { add(on_host, elsewhere); },
                         {"expected all tensors on one device, got cpu and fixture:0"});
  check_invalid_argument([&] { where(gt(on_host, 0), on_host, elsewhere); },
                         {"got cpu and fixture:0"});
  check_invalid_argument([&] { cat({on_host, elsewhere}); }, {"got cpu and fixture:0"});
  check_invalid_argument(
      [&] {
        mm(on_host.view({1, 2}), elsewhere.view({2, 1}));
      },
      {"got cpu and fixture:0"});
}
