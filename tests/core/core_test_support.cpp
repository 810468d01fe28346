#include "core_test_support.h"

namespace coretest {
namespace {

bp::Device load_fixture(const char* file, const char* backend) {
  bp::load_plugin(std::string(BACKPLANE_FIXTURE_DIR) + "/" + file);
  return bp::Device(backend);
}

}  // namespace

bp::Device fixture_device() {
  static const bp::Device device = load_fixture("libbackplane_fixture.so", "fixture");
  return device;
}

bp::Device fixture_device_memory_device() {
  static const bp::Device device =
      load_fixture("libbackplane_fixture_device_memory.so", "fixture_device_memory");
  return device;
}

}  // namespace coretest
