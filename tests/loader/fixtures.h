// The fixture plugins of tests/fixtures, and the checks and helpers the loader tests share.
#pragma once

#include <backplane/backplane.h>

#include <doctest/doctest.h>

#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
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

// A fresh folder under the temporary folder, holding a one-line file for each name given, and
// removed with everything in it at the end of the test.
class TemporaryFolder {
 public:
  explicit TemporaryFolder(const std::vector<std::string>& files = {}) {
    std::string name =
        (std::filesystem::temp_directory_path() / "backplane-loader-XXXXXX").string();
    REQUIRE(mkdtemp(name.data()) != nullptr);
    path_ = name;
    for (const std::string& file : files) std::ofstream(path_ / file).put('\n');
  }
  ~TemporaryFolder() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TemporaryFolder(const TemporaryFolder&) = delete;
  TemporaryFolder& operator=(const TemporaryFolder&) = delete;

  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

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
