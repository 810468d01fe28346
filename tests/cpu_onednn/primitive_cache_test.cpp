// The cpu backend's primitive cache, seen through its counters: a repeated product makes
// nothing new, the least recently used primitive leaves a full cache, capacity 0 caches
// nothing, and BACKPLANE_CPU_PRIMITIVE_CACHE values that are not capacities are warned about.
// The capacity is read once per process, so those cases run cpu_cache_probe in a child.
#include "probe_report.h"

#include <backplane/backplane.h>

#include <doctest/doctest.h>

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace {

using Counters = std::map<std::string, uint64_t>;

Counters cpu_counters() {
  Counters counters;
  for (const bp::BackendCounter& counter : bp::backend_counters("cpu")) {
    counters[counter.name] = counter.value;
  }
  return counters;
}

struct ProbeResult {
  Counters counters;
  std::string err;
};

// cpu_cache_probe with one product per entry of `rows`, under BACKPLANE_CPU_PRIMITIVE_CACHE =
// `capacity`.
ProbeResult probe(const std::string& capacity, const std::vector<int>& rows) {
  std::vector<std::string> argv{CACHE_PROBE_EXECUTABLE};
  for (const int r : rows) argv.push_back(std::to_string(r));
  cpu_onednn_test::ProbeReport report = cpu_onednn_test::run_probe(
      argv, {{"BACKPLANE_BACKENDS", "cpu"}, {"BACKPLANE_CPU_PRIMITIVE_CACHE", capacity}});
  return {std::move(report.values), std::move(report.err)};
}

}  // namespace

TEST_CASE("a repeated product makes its primitive once and then only hits") {
  // A shape no other test here uses, so that its first call misses.
  const bp::Tensor a = bp::ones({29, 31});
  const bp::Tensor b = bp::ones({31, 37});
  const Counters before = cpu_counters();
  REQUIRE(before.at("primitive_cache.capacity") > before.at("primitive_cache.size"));

  bp::mm(a, b);
  const Counters first = cpu_counters();
  CHECK(first.at("primitive_cache.misses") == before.at("primitive_cache.misses") + 1);
  CHECK(first.at("primitive_cache.hits") == before.at("primitive_cache.hits"));
  CHECK(first.at("primitive_cache.size") == before.at("primitive_cache.size") + 1);

  for (int i = 0; i < 5; ++i) bp::mm(a, b);
  const Counters repeated = cpu_counters();
  CHECK(repeated.at("primitive_cache.misses") == first.at("primitive_cache.misses"));
  CHECK(repeated.at("primitive_cache.hits") == first.at("primitive_cache.hits") + 5);
  CHECK(repeated.at("primitive_cache.size") == first.at("primitive_cache.size"));

  // Another layout of the same shapes is another primitive.
  bp::mm(a, b.transpose(0, 1).contiguous().transpose(0, 1));
  CHECK(cpu_counters().at("primitive_cache.misses") == first.at("primitive_cache.misses") + 1);
}

TEST_CASE("a full cache forgets its least recently used primitive") {
  // Capacity 2: 1 and 2 fill it, 1 is used again, so 3 evicts 2; 1 still hits, 2 misses again
  // and evicts 3.
  const ProbeResult result = probe("2", {1, 2, 1, 3, 1, 2});
  const Counters& c = result.counters;
  CHECK(c.at("primitive_cache.capacity") == 2);
  CHECK(c.at("primitive_cache.misses") == 4);
  CHECK(c.at("primitive_cache.hits") == 2);
  CHECK(c.at("primitive_cache.evictions") == 2);
  CHECK(c.at("primitive_cache.size") == 2);
}

TEST_CASE("capacity 0 makes every primitive anew and keeps none") {
  const Counters c = probe("0", {1, 1, 1}).counters;
  CHECK(c.at("primitive_cache.capacity") == 0);
  CHECK(c.at("primitive_cache.misses") == 3);
  CHECK(c.at("primitive_cache.hits") == 0);
  CHECK(c.at("primitive_cache.evictions") == 0);
  CHECK(c.at("primitive_cache.size") == 0);
}

TEST_CASE("a BACKPLANE_CPU_PRIMITIVE_CACHE that is no capacity warns and the default applies") {
  for (const std::string value : {"abc", "-3", "12x", "", "1048577"}) {
    CAPTURE(value);
    const ProbeResult result = probe(value, {1, 1});
    CHECK(result.err.find("[backplane] warn: cpu: BACKPLANE_CPU_PRIMITIVE_CACHE='" + value +
                          "' is not a number of cached primitives from 0 (no caching) to "
                          "1048576; using the default, 1024") != std::string::npos);
    CHECK(result.counters.at("primitive_cache.capacity") == 1024);
    CHECK(result.counters.at("primitive_cache.hits") == 1);
  }
}
