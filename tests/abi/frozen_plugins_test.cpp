// Plugins built against the headers of every released minor version (tests/abi/frozen) load
// with this core, compute on their devices, and are given only what their version has: the
// fields past their descriptor's struct_size count as absent.
#include <backplane/abi.h>
#include <backplane/backplane.h>

#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace {

// The plugins are built from every header of tests/abi/frozen, 1.0 to this one.
constexpr uint32_t kNewestReleasedMinor = FROZEN_NEWEST_MINOR;
static_assert(kNewestReleasedMinor <= BP_ABI_MINOR, "a frozen header is newer than the core's");

std::string backend_of(uint32_t minor) { return "abi1" + std::to_string(minor); }

// The plugin built against ABI 1.<minor>, loaded by this test or an earlier one.
bp::PluginInfo load_frozen(uint32_t minor) {
  const std::string path =
      std::string(FROZEN_PLUGIN_DIR) + "/libbackplane_" + backend_of(minor) + ".so";
  for (const bp::PluginInfo& plugin : bp::runtime_info().plugins) {
    if (plugin.path == path) return plugin;
  }
  return bp::load_plugin(path);
}

uint64_t counter(uint32_t minor, const std::string& name) {
  for (const bp::BackendCounter& c : bp::backend_counters(backend_of(minor))) {
    if (c.name == backend_of(minor) + "." + name) return c.value;
  }
  FAIL("backend ", backend_of(minor), " has no counter named ", name);
  return 0;
}

}  // namespace

TEST_CASE("a plugin of every released minor version loads and reports its version") {
  for (uint32_t minor = 0; minor <= kNewestReleasedMinor; ++minor) {
    CAPTURE(minor);
    const bp::PluginInfo info = load_frozen(minor);
    CHECK(info.name == backend_of(minor));
    CHECK(info.abi_major == 1);
    CHECK(info.abi_minor == minor);
    CHECK(info.devices.size() == 1);
    // Its kernel's schema hash, computed as the old header defines it, still matches.
    CHECK(info.ops == std::vector<std::string>{"add.out"});
    CHECK(info.refused_kernels.empty());
  }
}

TEST_CASE("bp::add runs on the device of a plugin of every released minor version") {
  for (uint32_t minor = 0; minor <= kNewestReleasedMinor; ++minor) {
    CAPTURE(minor);
    load_frozen(minor);
    const bp::Device device(backend_of(minor));
    const bp::Tensor a = bp::from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3}).to(device);
    const bp::Tensor b = bp::from_vector<float>({10, 20, 30, 40, 50, 60}, {2, 3}).to(device);
    const bp::Tensor sum = bp::add(a, b);
    CHECK(sum.device() == device);
    CHECK(sum.to_vector<float>() == std::vector<float>{11, 22, 33, 44, 55, 66});
    CHECK(bp::add(a, b, 2.5).to_vector<float>() == std::vector<float>{26, 52, 78, 104, 130, 156});
  }
}

TEST_CASE("counters are absent before ABI 1.1, and read from the plugin from 1.1 on") {
  load_frozen(0);
  CHECK(bp::backend_counters(backend_of(0)).empty());
  for (uint32_t minor = 1; minor <= kNewestReleasedMinor; ++minor) {
    CAPTURE(minor);
    load_frozen(minor);
    const uint64_t before = counter(minor, "add_calls");
    const bp::Tensor a = bp::from_vector<float>({1}, {1}).to(bp::Device(backend_of(minor)));
    bp::add(a, a);
    CHECK(counter(minor, "add_calls") == before + 1);
  }
}

TEST_CASE("events are the plugin's own from ABI 1.2 on, and absent before") {
  for (uint32_t minor = 0; minor <= kNewestReleasedMinor; ++minor) {
    CAPTURE(minor);
    CHECK(load_frozen(minor).has_events == (minor >= 2));
    const bp::Device device(backend_of(minor));
    bp::Event start(device);
    bp::Event end(device);
    start.record();
    end.record();
    end.synchronize();
    CHECK(end.query());
    CHECK(start.elapsed_ms(end) >= 0.0);
  }
}

TEST_CASE("the core attaches its services to plugins of ABI 1.3 on, and to no older one") {
  for (uint32_t minor = 1; minor <= kNewestReleasedMinor; ++minor) {
    CAPTURE(minor);
    load_frozen(minor);
    CHECK(counter(minor, "core_attached") == (minor >= 3 ? 1 : 0));
  }
}

TEST_CASE("the core gives plugins of ABI 1.5 on their inputs' storage versions") {
  for (uint32_t minor = 5; minor <= kNewestReleasedMinor; ++minor) {
    CAPTURE(minor);
    load_frozen(minor);
    const uint64_t before = counter(minor, "versioned_inputs");
    const bp::Tensor a = bp::from_vector<float>({1, 2}, {2}).to(bp::Device(backend_of(minor)));
    bp::add(a, a);
    CHECK(counter(minor, "versioned_inputs") == before + 2);
  }
}

TEST_CASE("the DLPack device type is the plugin's from ABI 1.4 on, and guessed before") {
  for (uint32_t minor = 0; minor <= kNewestReleasedMinor; ++minor) {
    CAPTURE(minor);
    load_frozen(minor);
    const bp::Tensor t = bp::from_vector<float>({1, 2}, {2}).to(bp::Device(backend_of(minor)));
    if (minor >= 4) {
      // Declared: kDLCPU, the plugin's malloc'd memory.
      DLManagedTensor* managed = bp::to_dlpack(t);
      CHECK(managed->dl_tensor.device.device_type == kDLCPU);
      CHECK(static_cast<const float*>(managed->dl_tensor.data)[1] == 2.0F);
      managed->deleter(managed);
    } else {
      // Guessed: a backend with memory functions whose name DLPack does not know is kDLExtDev,
      // which cannot be exported.
      CHECK_THROWS_AS(bp::to_dlpack(t), bp::Error);
    }
  }
}
