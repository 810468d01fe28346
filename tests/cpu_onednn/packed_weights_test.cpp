// The cpu backend keeps a convolution's weights reordered into oneDNN's blocked layout from call
// to call, for as long as nothing writes into their storage: every scenario of
// packed_weights_probe runs in a child process with the blocked layout forced, checks each
// result against the float64 loops, and reports the backend's counters.
#include "probe_report.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <map>
#include <string>
#include <utility>

namespace {

using Counters = std::map<std::string, uint64_t>;

struct ProbeResult {
  Counters counters;  // with packed_weights_probe's "wrong" count
  std::string err;
};

// packed_weights_probe's report for `scenario`, under `cache_capacity` and `layout`.
ProbeResult probe(const std::string& scenario, const std::string& cache_capacity,
                  const std::string& layout) {
  cpu_onednn_test::ProbeReport report =
      cpu_onednn_test::run_probe({PACKED_WEIGHTS_PROBE_EXECUTABLE, scenario},
                                 {{"BACKPLANE_BACKENDS", "cpu"},
                                  {"BACKPLANE_CPU_CONV_LAYOUT", layout},
                                  {"BACKPLANE_CPU_PRIMITIVE_CACHE", cache_capacity}});
  REQUIRE(report.values.count("wrong") == 1);
  return {std::move(report.values), std::move(report.err)};
}

// The counters of `scenario` with the blocked layout forced, so that weights are reordered.
Counters run_scenario(const std::string& scenario, const std::string& cache_capacity = "1024") {
  return probe(scenario, cache_capacity, "blocked").counters;
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

TEST_CASE("the plain layout reorders no weight") {
  const Counters c = probe("repeat", "1024", "plain").counters;
  CHECK(c.at("wrong") == 0);
  CHECK(c.at("packed_weights.packs") == 0);
  CHECK(c.at("packed_weights.hits") == 0);
  CHECK(c.at("packed_weights.unkept") == 0);
}

TEST_CASE(
    "a BACKPLANE_CPU_CONV_LAYOUT that names no layout warns, and the measured choice applies") {
  for (const std::string value : {"diagonal", "", "Blocked"}) {
    CAPTURE(value);
    const ProbeResult result = probe("repeat", "1024", value);
    CHECK(result.counters.at("wrong") == 0);
    CHECK(result.err.find("[backplane] warn: cpu: BACKPLANE_CPU_CONV_LAYOUT='" + value +
                          "' is none of measured (time both layouts on each problem's first "
                          "call, the default), plain (NCHW) and blocked (oneDNN's choice); using "
                          "measured") != std::string::npos);
  }
}

TEST_CASE("the layouts timed on a problem's first call each keep weights of their own") {
  // Each plan tried reorders the weights into its own layout; one served another's would give
  // wrong results from then on.
  for (const char* scenario : {"repeat", "mul_"}) {
    CAPTURE(scenario);
    const Counters c = probe(scenario, "1024", "measured").counters;
    CHECK(c.at("wrong") == 0);
  }
}
