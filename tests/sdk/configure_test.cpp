// plugin::configure_descriptor: how the generated entry point runs the author's
// configure_plugin, and what a plugin whose configure_plugin throws tells the core.
#include <backplane/sdk/configure.hpp>

#include <doctest/doctest.h>

#include <stdexcept>
#include <string>

namespace {

bp_status count_two(int32_t* count) {
  *count = 2;
  return BP_STATUS_OK;
}

bp_status describe(int32_t, bp_device_properties*) { return BP_STATUS_OK; }

const bp_kernel kKernels[1] = {{sizeof(bp_kernel), "add.out", 0, nullptr}};

// A descriptor as the generated code fills it before calling configure_plugin.
bp_plugin generated_fields() {
  bp_plugin plugin{};
  plugin.struct_size = sizeof(bp_plugin);
  plugin.abi_major = BP_ABI_MAJOR;
  plugin.abi_minor = BP_ABI_MINOR;
  plugin.name = "acme";
  plugin.version = "1.0.0";
  plugin.last_error = &bp::plugin::last_error;
  plugin.kernels = kKernels;
  plugin.kernel_count = 1;
  return plugin;
}

}  // namespace

TEST_CASE("a configure_plugin that returns leaves the descriptor as it set it") {
  bp_plugin plugin = generated_fields();
  bp::plugin::configure_descriptor(plugin, [](bp_plugin& p) {
    p.device_count = &count_two;
    p.device_properties = &describe;
  });
  CHECK((plugin.device_count == &count_two));
  CHECK((plugin.device_properties == &describe));
  CHECK((plugin.init == nullptr));
  CHECK(plugin.kernel_count == 1);
}

TEST_CASE("a configure_plugin that throws leaves a descriptor whose init fails with the message") {
  bp_plugin plugin = generated_fields();
  bp::plugin::configure_descriptor(plugin, [](bp_plugin& p) {
    p.device_count = &count_two;  // set before the failure: must not survive it
    throw std::runtime_error("libacmedriver.so.3 is missing; install acme-driver");
  });
  CHECK(std::string(plugin.name) == "acme");
  CHECK(std::string(plugin.version) == "1.0.0");
  CHECK(plugin.kernels == nullptr);
  CHECK(plugin.kernel_count == 0);
  REQUIRE((plugin.init != nullptr));
  CHECK(plugin.init() == BP_STATUS_INTERNAL);
  CHECK(std::string(plugin.last_error()) ==
        "configure_plugin failed: libacmedriver.so.3 is missing; install acme-driver");
  // Functions every descriptor must have are there, and report no devices.
  REQUIRE((plugin.device_count != nullptr));
  REQUIRE((plugin.device_properties != nullptr));
  int32_t count = -1;
  CHECK(plugin.device_count(&count) == BP_STATUS_OK);
  CHECK(count == 0);
}

TEST_CASE("an exception of unknown type is reported as such") {
  bp_plugin plugin = generated_fields();
  bp::plugin::configure_descriptor(plugin, [](bp_plugin&) { throw 42; });
  REQUIRE((plugin.init != nullptr));
  CHECK(plugin.init() == BP_STATUS_INTERNAL);
  CHECK(std::string(plugin.last_error()) ==
        "configure_plugin failed: an exception of unknown type");
}
