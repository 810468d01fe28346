// Plugins that load: device types, devices, kernels on a second device type, kernels that fail,
// and the wrappers that turn a plugin's failure into a bp::Error.
#include "fixtures.h"
#include "runtime/registry.h"

#include <backplane/backplane.h>

#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

using bp::detail::Registry;
using loader_test::check_cpu_backend_works;
using loader_test::contains;
using loader_test::fixture_path;
using loader_test::load_once;

TEST_CASE("the host is device type 0 named cpu whether or not a plugin provides it") {
  const Registry& registry = Registry::get();
  CHECK(registry.device_type_of("cpu") == bp::Device::kHostType);
  CHECK(registry.device_type_name(bp::Device::kHostType) == "cpu");
  CHECK(bp::devices().front() == bp::Device::cpu());
}

TEST_CASE("the cpu plugin attaches to the host device type") {
  const bp::detail::Backend* host = Registry::get().backend(bp::Device::kHostType);
  REQUIRE_MESSAGE(host != nullptr, "the cpu plugin did not load: run bp-info to see why");
  CHECK(host->info().name == "cpu");
  CHECK(host->device_type() == bp::Device::kHostType);
  CHECK(host->info().devices.at(0).device == bp::Device::cpu());
}

TEST_CASE("another backend gets the next device type and ops run on its device") {
  const bp::PluginInfo info = load_once(fixture_path("fixture"));
  CHECK(info.name == "fixture");
  CHECK(info.version == "0.0.1");
  CHECK(info.abi_major == BP_ABI_MAJOR);
  CHECK(info.ops == std::vector<std::string>{"add.out"});
  CHECK(info.refused_kernels.empty());

  const std::optional<int16_t> type = Registry::get().device_type_of("fixture");
  REQUIRE(type);
  CHECK(*type > bp::Device::kHostType);
  CHECK(Registry::get().device_type_name(*type) == "fixture");
  REQUIRE(info.devices.size() == 1);
  CHECK(info.devices[0].device == bp::Device(*type, 0));
  CHECK(info.devices[0].name == "fixture device");
  CHECK(info.devices[0].total_memory == 1 << 20);
  const std::vector<bp::Device> devices = bp::devices();
  CHECK(std::count(devices.begin(), devices.end(), bp::Device("fixture:0")) == 1);

  const bp::Device device("fixture");
  const bp::Tensor a = bp::from_vector<float>({1, 2, 3}, {3}).to(device);
  const bp::Tensor b = bp::from_vector<float>({10, 20, 30}, {3}).to(device);
  const bp::Tensor sum = bp::add(a, b, 2);
  CHECK(sum.device() == device);
  CHECK(sum.cpu().to_vector<float>() == std::vector<float>{21, 42, 63});
}

TEST_CASE("an op the backend lacks is an error naming the op and the backend") {
  load_once(fixture_path("fixture"));
  const bp::Tensor a = bp::from_vector<float>({1, 2}, {2}).to(bp::Device("fixture"));
  try {
    bp::mul(a, a);
    FAIL("mul ran on a backend without mul.out");
  } catch (const bp::Error& error) {
    CHECK(error.code() == bp::ErrorCode::NotImplemented);
    CHECK(contains(error.what(), "mul.out"));
    CHECK(contains(error.what(), "fixture"));
  }
}

TEST_CASE("a kernel that throws reports the plugin's message and the process goes on") {
  load_once(fixture_path("fixture_thrower"));
  const bp::Device device("fixture_thrower");
  const bp::Tensor a = bp::from_vector<float>({1, 2}, {2}).to(device);
  for (int attempt = 0; attempt < 2; ++attempt) {
    try {
      bp::add(a, a);
      FAIL("the throwing kernel returned");
    } catch (const bp::Error& error) {
      CHECK(error.code() == bp::ErrorCode::Backend);
      CHECK(contains(error.what(), "add.out"));
      CHECK(contains(error.what(), "fixture_thrower: add.out always throws"));
    }
  }
  check_cpu_backend_works();
}

TEST_CASE("a kernel with a stale schema hash is refused and the plugin's other kernels install") {
  const bp::PluginInfo info = load_once(fixture_path("fixture_schema_mismatch"));
  CHECK(info.ops == std::vector<std::string>{"add.out"});
  REQUIRE(info.refused_kernels.size() == 2);
  CHECK(info.refused_kernels[0].op == "mul.out");
  CHECK(contains(info.refused_kernels[0].reason, "differs from the core's"));
  CHECK(contains(info.refused_kernels[0].reason, "rebuild the plugin against this SDK"));
  CHECK(info.refused_kernels[1].op == "frobnicate.out");

  const bp::Tensor a = bp::from_vector<float>({1}, {1}).to(bp::Device("fixture_schema_mismatch"));
  try {
    bp::mul(a, a);
    FAIL("a refused kernel ran");
  } catch (const bp::Error& error) {
    CHECK(contains(error.what(), "refused"));
  }
}

TEST_CASE("loading a file already loaded returns its plugin again, under any path") {
  const bp::PluginInfo first = load_once(fixture_path("fixture"));
  const size_t failures = bp::runtime_info().failures.size();
  const std::string other_path = loader_test::fixture_dir() + "/./libbackplane_fixture.so";
  const bp::PluginInfo again = bp::load_plugin(other_path);
  CHECK(again.name == first.name);
  CHECK(again.path == first.path);
  CHECK(bp::runtime_info().failures.size() == failures);
}

TEST_CASE(
    "a plugin file named explicitly loads under its descriptor's name, whatever the file "
    "is called") {
  const bp::PluginInfo info = load_once(fixture_path("fixture_misnamed"));
  CHECK(info.name == "fixture_renamed");
  CHECK(Registry::get().device_type_of("fixture_renamed"));
  CHECK_FALSE(Registry::get().device_type_of("fixture_misnamed"));
}

TEST_CASE("a plugin that cannot count its devices loads with none and says why") {
  const bp::PluginInfo info = load_once(fixture_path("fixture_no_devices"));
  CHECK(info.devices.empty());
  CHECK(info.device_note == "fixture_no_devices: no driver is installed on this machine");
  CHECK_THROWS_AS(bp::Device("fixture_no_devices:0"), bp::Error);
}

TEST_CASE("a plugin with its own memory moves data through its memory functions") {
  load_once(fixture_path("fixture_device_memory"));
  const bp::Device device("fixture_device_memory");
  const bp::Tensor on_device = bp::from_vector<float>({1, 2, 3}, {3}).to(device);
  CHECK(on_device.device() == device);
  CHECK(on_device.cpu().to_vector<float>() == std::vector<float>{1, 2, 3});
}

TEST_CASE("a plugin's out-of-memory status is an OutOfMemory bp::Error with its message") {
  load_once(fixture_path("fixture_device_memory"));
  const auto type = Registry::get().device_type_of("fixture_device_memory");
  REQUIRE(type);
  const bp::detail::Backend* backend = Registry::get().backend(*type);
  try {
    backend->allocate(0, 2 << 20);
    FAIL("allocating twice the device's memory succeeded");
  } catch (const bp::Error& error) {
    CHECK(error.code() == bp::ErrorCode::OutOfMemory);
    CHECK(std::string(error.what()) ==
          "backend 'fixture_device_memory' could not allocate 2097152 bytes on "
          "fixture_device_memory:0 (out of memory): fixture_device_memory: 2097152 bytes asked, "
          "the device has 1 MiB");
  }
  CHECK_THROWS_AS(bp::empty({1 << 20}, bp::kFloat32, bp::Device("fixture_device_memory")),
                  bp::Error);
  check_cpu_backend_works();
}

TEST_CASE("a device index the backend does not have is refused before the plugin is called") {
  load_once(fixture_path("fixture_device_memory"));
  const auto type = Registry::get().device_type_of("fixture_device_memory");
  REQUIRE(type);
  CHECK_THROWS_WITH(Registry::get().backend(*type)->allocate(3, 16),
                    "backend 'fixture_device_memory' cannot allocate 16 bytes on device 3: it "
                    "has 1 device(s)");
}
