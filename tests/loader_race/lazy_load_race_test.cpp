// Eight threads racing the first use of the runtime load the plugins exactly once.
// BACKPLANE_PLUGIN_PATH names the fixture plugin, whose device description counts its init
// calls, and a folder that does not exist, which adds a warning each time the environment is
// read. Nothing in this process touches the runtime before the race.
#include <backplane/backplane.h>

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <latch>
#include <string>
#include <thread>
#include <vector>

TEST_CASE("eight threads racing the first use load each plugin once") {
  const std::string fixture_dir = BACKPLANE_FIXTURE_DIR;
  const std::string plugin_path =
      fixture_dir + "/libbackplane_fixture.so:" + fixture_dir + "/missing";
  REQUIRE(setenv("BACKPLANE_PLUGIN_PATH", plugin_path.c_str(), 1) == 0);
  constexpr int kThreads = 8;
  std::latch start(kThreads);
  std::vector<bp::RuntimeInfo> seen(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      start.arrive_and_wait();
      seen[i] = bp::runtime_info();
    });
  }
  for (std::thread& thread : threads) thread.join();

  const bp::RuntimeInfo& first = seen[0];
  CHECK(first.failures.empty());  // a second load of the fixture would fail as a duplicate
  CHECK(first.warnings.size() == 1);
  const auto fixture = std::find_if(first.plugins.begin(), first.plugins.end(),
                                    [](const bp::PluginInfo& p) { return p.name == "fixture"; });
  REQUIRE_MESSAGE(fixture != first.plugins.end(),
                  (std::string("the fixture plugin did not load from ") + plugin_path));
  REQUIRE(fixture->devices.size() == 1);
  CHECK(fixture->devices[0].description == "initialized 1 time(s)");

  for (const bp::RuntimeInfo& info : seen) {
    CHECK(info.warnings == first.warnings);
    REQUIRE(info.plugins.size() == first.plugins.size());
    for (size_t p = 0; p < info.plugins.size(); ++p) {
      CHECK(info.plugins[p].name == first.plugins[p].name);
      CHECK(info.plugins[p].path == first.plugins[p].path);
      CHECK(info.plugins[p].devices.size() == first.plugins[p].devices.size());
    }
  }
}
