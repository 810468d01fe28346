#include "core_test_support.h"

#include <cstdlib>

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

bp::Device fixture_refuses_attention_device() {
  static const bp::Device device =
      load_fixture("libbackplane_fixture_refuses_attention.so", "fixture_refuses_attention");
  return device;
}

bool falls_back_to_cpu() {
  const char* value = std::getenv("BACKPLANE_FALLBACK");
  return value != nullptr && std::string_view(value) == "cpu";
}

uint64_t backend_counter(std::string_view backend, std::string_view name) {
  for (const bp::BackendCounter& counter : bp::backend_counters(backend)) {
    if (counter.name == name) return counter.value;
  }
  FAIL("backend " << std::string(backend) << " has no counter " << std::string(name));
  return 0;
}

}  // namespace coretest
