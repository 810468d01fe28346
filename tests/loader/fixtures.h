// The fixture plugins of tests/fixtures, and the checks and helpers the loader tests share.
#pragma once

#include "temporary_folder.h"

#include <backplane/backplane.h>

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace loader_test {

inline std::string fixture_dir() { return BACKPLANE_FIXTURE_DIR; }

// fixture_path("fixture_thrower") is .../libbackplane_fixture_thrower.so.
inline std::string fixture_path(std::string_view suffix) {
  return fixture_dir() + "/libbackplane_" + std::string(suffix) + ".so";
}

inline bool contains(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

using test_support::TemporaryFolder;

// How long a child process that loads a damaged or special plugin file may take: a regression
// that hangs fails the test instead of the suite.
inline constexpr std::chrono::seconds kChildTimeLimit{30};

// The plugin loaded from `path`, loading it unless an earlier test of this process did.
inline bp::PluginInfo load_once(const std::string& path) {
  for (const bp::PluginInfo& plugin : bp::runtime_info().plugins) {
    if (plugin.path == path) return plugin;
  }
  return bp::load_plugin(path);
}

// The message of the bp::Error that loading `path` throws.
inline std::string load_failure(const std::string& path) {
  try {
    bp::load_plugin(path);
  } catch (const bp::Error& error) {
    CHECK(error.code() == bp::ErrorCode::Backend);
    return error.what();
  }
  FAIL("loading ", path, " did not fail");
  return {};
}

// Whatever failed before, the cpu backend still computes.
inline void check_cpu_backend_works() {
  const bp::Tensor a = bp::from_vector<float>({1, 2, 3}, {3});
  const bp::Tensor b = bp::from_vector<float>({10, 20, 30}, {3});
  CHECK(bp::add(a, b).to_vector<float>() == std::vector<float>{11, 22, 33});
}

}  // namespace loader_test
