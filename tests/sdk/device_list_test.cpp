// plugin::DeviceList: how every plugin numbers its devices, says why it has none, and refuses
// calls after shutdown.
#include <backplane/sdk/device_list.hpp>

#include <doctest/doctest.h>

#include <memory>
#include <string>

namespace {

using bp::plugin::DeviceList;
using bp::plugin::Error;

struct FakeDevice {
  std::string label;
  bool released = false;

  const std::string& name() const { return label; }
  const std::string& description() const { return label; }
  uint64_t total_memory() const { return 1 << 20; }
};

// The list of a plugin named "acme" that found two devices.
struct TwoDevices {
  TwoDevices() {
    devices.add(std::make_unique<FakeDevice>(FakeDevice{"first"}));
    devices.add(std::make_unique<FakeDevice>(FakeDevice{"second"}));
  }
  DeviceList<FakeDevice> devices{"acme"};
};

void check_refused(const DeviceList<FakeDevice>& devices, int index, bp_status code,
                   const std::string& message) {
  try {
    devices.at(index);
    FAIL("at(" << index << ") was not refused");
  } catch (const Error& e) {
    CHECK(e.code() == code);
    CHECK(std::string(e.what()) == message);
  }
}

}  // namespace

TEST_CASE_FIXTURE(TwoDevices, "devices are numbered in the order they were added") {
  CHECK(devices.count() == 2);
  CHECK(devices.at(0).label == "first");
  CHECK(devices.at(1).label == "second");
  int32_t count = -1;
  devices.report_count(&count);
  CHECK(count == 2);
}

TEST_CASE_FIXTURE(TwoDevices, "device properties come from the device at the index") {
  bp_device_properties props{};
  props.struct_size = sizeof props;
  devices.report_properties(1, &props);
  CHECK(std::string(props.name) == "second");
  CHECK(props.total_memory == 1 << 20);
  CHECK_THROWS_AS(devices.report_properties(2, &props), Error);
}

TEST_CASE_FIXTURE(TwoDevices,
                  "an index the plugin does not have is an invalid argument that names the range") {
  check_refused(devices, 2, BP_STATUS_INVALID_ARGUMENT,
                "acme has 2 device(s); acme:2 does not exist");
  check_refused(devices, -1, BP_STATUS_INVALID_ARGUMENT,
                "acme has 2 device(s); acme:-1 does not exist");
}

TEST_CASE_FIXTURE(TwoDevices,
                  "without devices, device_count fails with the reason the plugin gave") {
  devices.set_none("the acme driver is not installed; install acme-dkms");
  CHECK(devices.count() == 0);
  int32_t count = -1;
  try {
    devices.report_count(&count);
    FAIL("report_count succeeded without devices");
  } catch (const Error& e) {
    CHECK(e.code() == BP_STATUS_DEVICE_ERROR);
    CHECK(std::string(e.what()) == "the acme driver is not installed; install acme-dkms");
  }
  CHECK(count == 0);
}

TEST_CASE_FIXTURE(TwoDevices,
                  "shutdown releases the devices once, and every later call is refused") {
  FakeDevice& first = devices.at(0);
  int releases = 0;
  const auto release = [&](auto& all) {
    ++releases;
    for (auto& device : all) device->released = true;
  };
  devices.shut_down(release);
  devices.shut_down(release);
  CHECK(releases == 1);
  CHECK(first.released);  // still allocated: a call already inside a device can finish
  check_refused(devices, 0, BP_STATUS_DEVICE_ERROR, "the acme plugin has shut down");
}
