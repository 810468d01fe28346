// The cpu backend keeps a convolution's weights reordered into oneDNN's blocked layout from call
// to call, for as long as nothing writes into their storage: every scenario of
// packed_weights_probe runs in a child process with the blocked layout forced, checks each
// result against the float64 loops, and reports the backend's counters.
#include "child_process.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <map>
#include <sstream>
#include <string>

namespace {

using Counters = std::map<std::string, uint64_t>;

// packed_weights_probe's "wrong" count and counters for `scenario`, under `cache_capacity`.
Counters run_scenario(const std::string& scenario, const std::string& cache_capacity = "1024") {
  const test_support::ChildResult result =
      test_support::run_child({PACKED_WEIGHTS_PROBE_EXECUTABLE, scenario},
                              {{"BACKPLANE_BACKENDS", "cpu"},
                               {"BACKPLANE_CPU_CONV_LAYOUT", "blocked"},
                               {"BACKPLANE_CPU_PRIMITIVE_CACHE", cache_capacity}});
  INFO("stderr: " << result.err);
  REQUIRE(result.exit_code == 0);
  Counters counters;
  std::istringstream lines(result.out);
  std::string name;
  uint64_t value = 0;
  while (lines >> name >> value) counters[name] = value;
  REQUIRE(counters.count("wrong") == 1);
  return counters;
}

}  // namespace

TEST_CASE("a weight is reordered on its first call and served from the cache after") {
  const Counters c = run_scenario("repeat");
  CHECK(c.at("wrong") == 0);
  CHECK(c.at("packed_weights.packs") == 1);
  CHECK(c.at("packed_weights.hits") == 2);
  CHECK(c.at("packed_weights.unkept") == 0);
}

TEST_CASE("a weight written in place is reordered again on its next call") {
  for (const char* scenario : {"mul_", "copy_", "out"}) {
    CAPTURE(scenario);
    const Counters c = run_scenario(scenario);
    CHECK(c.at("wrong") == 0);
    CHECK(c.at("packed_weights.packs") == 2);
    CHECK(c.at("packed_weights.hits") == 0);
    // The second reorder takes the first one's place in the cache.
    CHECK(c.at("primitive_cache.replacements") == 1);
  }
}

TEST_CASE(
    "two weights viewing one storage are kept apart, and a write through either view "
    "renews both") {
  const Counters c = run_scenario("views");
  CHECK(c.at("wrong") == 0);
  CHECK(c.at("packed_weights.packs") == 4);
  CHECK(c.at("packed_weights.hits") == 0);
  CHECK(c.at("primitive_cache.replacements") == 2);
}

TEST_CASE("a weight whose address was handed out is reordered on every call, never kept") {
  const Counters c = run_scenario("data_ptr");
  CHECK(c.at("wrong") == 0);
  CHECK(c.at("packed_weights.packs") == 0);
  CHECK(c.at("packed_weights.unkept") == 2);
}

TEST_CASE("with the primitive cache off no weight is kept") {
  const Counters c = run_scenario("repeat", "0");
  CHECK(c.at("wrong") == 0);
  CHECK(c.at("packed_weights.packs") == 0);
  CHECK(c.at("packed_weights.hits") == 0);
  CHECK(c.at("packed_weights.unkept") == 3);
  CHECK(c.at("primitive_cache.size") == 0);
}
