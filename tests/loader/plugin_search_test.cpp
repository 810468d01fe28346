// Which files the loader tries, in which order: BACKPLANE_PLUGIN_PATH's entries, then the
// default folder next to libbackplane.
#include "fixtures.h"
#include "runtime/plugin_search.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using bp::detail::backend_name_from_file_name;
using bp::detail::find_plugin_files;
using loader_test::TemporaryFolder;

namespace {

std::vector<fs::path> paths_of(const bp::detail::PluginSearch& search) {
  std::vector<fs::path> paths;
  for (const auto& candidate : search.candidates) paths.push_back(candidate.path);
  return paths;
}

}  // namespace

TEST_CASE("a plugin file names its backend as libbackplane_<backend>.so") {
  CHECK(backend_name_from_file_name("/opt/lib/libbackplane_cuda.so") == "cuda");
  CHECK(backend_name_from_file_name("libbackplane_vendor_npu.so") == "vendor_npu");
  CHECK_FALSE(backend_name_from_file_name("libbackplane_.so"));
  CHECK_FALSE(backend_name_from_file_name("libbackplane.so"));
  CHECK_FALSE(backend_name_from_file_name("libbackplane_cuda.so.1"));
  CHECK_FALSE(backend_name_from_file_name("libcuda.so"));
}

TEST_CASE("a folder contributes its libbackplane_*.so files sorted by name") {
  const TemporaryFolder folder({"libbackplane_zeta.so", "libbackplane_alpha.so", "README",
                                "libother.so", "libbackplane_cpu.so.0"});
  const auto search = find_plugin_files({}, folder.path());
  CHECK(paths_of(search) == std::vector<fs::path>{folder.path() / "libbackplane_alpha.so",
                                                  folder.path() / "libbackplane_zeta.so"});
  CHECK_FALSE(search.candidates[0].named_explicitly);
  CHECK(search.warnings.empty());
}

TEST_CASE("BACKPLANE_PLUGIN_PATH entries come first in order and a missing one is a warning") {
  const TemporaryFolder first({"libbackplane_b.so"});
  const TemporaryFolder second({"any_name.so"});
  const TemporaryFolder default_folder({"libbackplane_a.so"});
  const std::string missing = (first.path() / "no_such_folder").string();
  const auto search =
      find_plugin_files({first.path().string(), missing, (second.path() / "any_name.so").string()},
                        default_folder.path());

  CHECK(paths_of(search) == std::vector<fs::path>{first.path() / "libbackplane_b.so",
                                                  second.path() / "any_name.so",
                                                  default_folder.path() / "libbackplane_a.so"});
  CHECK(search.candidates[1].named_explicitly);
  REQUIRE(search.warnings.size() == 1);
  CHECK(search.warnings[0] ==
        "BACKPLANE_PLUGIN_PATH entry '" + missing + "' does not exist; it is skipped");
}

TEST_CASE("a default folder that does not exist contributes nothing and is no warning") {
  const auto search = find_plugin_files({}, "/nonexistent/backplane/plugins");
  CHECK(search.candidates.empty());
  CHECK(search.warnings.empty());
}

TEST_CASE("the default plugin folder lies next to libbackplane and not in the working directory") {
  const fs::path folder = bp::detail::default_plugin_folder();
  CHECK(folder.is_absolute());
  CHECK(folder.string().ends_with("/backplane/plugins"));
  CHECK(fs::exists(folder.parent_path().parent_path() / "libbackplane.so"));
}
