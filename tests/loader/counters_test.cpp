// Counters that plugins report through read_counters (ABI 1.1): read live through
// bp::backend_counters, absent for plugins built against ABI 1.0, and written by the SDK's
// write_counters within whatever struct_size and room the core gives.
#include "fixtures.h"

#include <backplane/backplane.h>
#include <backplane/sdk/counters.hpp>

#include <doctest/doctest.h>

#include <cstddef>
#include <string>
#include <vector>

using loader_test::contains;
using loader_test::fixture_path;
using loader_test::load_once;

namespace {

uint64_t counter(const std::vector<bp::BackendCounter>& counters, const std::string& name) {
  for (const bp::BackendCounter& c : counters) {
    if (c.name == name) return c.value;
  }
  FAIL("no counter named ", name);
  return 0;
}

}  // namespace

TEST_CASE("a plugin's counters are read live, in the plugin's order") {
  load_once(fixture_path("fixture"));
  const std::vector<bp::BackendCounter> before = bp::backend_counters("fixture");
  REQUIRE(before.size() == 2);
  CHECK(before[0].name == "fixture.add_calls");
  CHECK(before[1].name == "fixture.init_calls");
  CHECK(before[1].value == 1);

  const bp::Tensor a = bp::from_vector<float>({1, 2}, {2}).to(bp::Device("fixture"));
  bp::add(a, a);
  CHECK(counter(bp::backend_counters("fixture"), "fixture.add_calls") == before[0].value + 1);
}

TEST_CASE("a plugin built against ABI 1.0 loads, and has no counters") {
  const bp::PluginInfo info = load_once(fixture_path("fixture_abi_1_0"));
  CHECK(info.abi_minor == 0);
  CHECK(info.devices.size() == 1);
  // Its read_counters lies past struct_size: absent, so it is not called (it would fail).
  CHECK(bp::backend_counters("fixture_abi_1_0").empty());
}

TEST_CASE("counters of a backend that is not loaded are an error naming the loaded ones") {
  try {
    bp::backend_counters("cdua");
    FAIL("no error");
  } catch (const bp::Error& error) {
    CHECK(contains(error.what(), "no backend named 'cdua' is loaded; loaded: cpu"));
  }
}

TEST_CASE("write_counters writes no more entries than there is room for, and always the count") {
  const bp::plugin::CounterValue values[] = {{"a", 1}, {"b", 2}, {"c", 3}};
  int64_t count = -1;
  CHECK(bp::plugin::write_counters(values, nullptr, 0, &count) == BP_STATUS_OK);
  CHECK(count == 3);

  std::vector<bp_counter> room(2, bp_counter{sizeof(bp_counter), nullptr, 0});
  CHECK(bp::plugin::write_counters(values, room.data(), 2, &count) == BP_STATUS_OK);
  CHECK(count == 3);
  CHECK(std::string(room[1].name) == "b");
  CHECK(room[1].value == 2);
}

TEST_CASE("write_counters writes only the fields within the core's struct_size, at its stride") {
  // A core whose bp_counter ends before `value`: entries are that long, and value is not there.
  constexpr size_t kShortSize = offsetof(bp_counter, value);
  static_assert(kShortSize % alignof(bp_counter) == 0);
  std::vector<std::byte> memory(2 * kShortSize + sizeof(uint64_t), std::byte{0x5a});
  auto entry = [&](size_t i) { return reinterpret_cast<bp_counter*>(memory.data() + i * kShortSize); };
  entry(0)->struct_size = kShortSize;
  entry(1)->struct_size = kShortSize;
  const bp::plugin::CounterValue values[] = {{"a", 1}, {"b", 2}};
  int64_t count = 0;
  REQUIRE(bp::plugin::write_counters(values, entry(0), 2, &count) == BP_STATUS_OK);
  CHECK(std::string(entry(0)->name) == "a");
  CHECK(std::string(entry(1)->name) == "b");
  // The bytes after the last short entry, where a full-size value would be, are untouched.
  CHECK(memory.back() == std::byte{0x5a});
}
