// Files named as plugins that dlopen must never be given: a named pipe, whose open() waits for
// a writer forever, and devices. Each is refused by what stat says, before anything opens it;
// the tests run in a child process with a time limit, so that a hang fails instead of stalling
// the suite.
#include "child_process.h"
#include "fixtures.h"
#include "json_reader.h"

#include <doctest/doctest.h>

#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

using loader_test::contains;
using loader_test::fixture_path;
using loader_test::JsonValue;
using loader_test::kChildTimeLimit;
using loader_test::parse_json;
using loader_test::TemporaryFolder;
using test_support::ChildResult;

namespace {

// The reason bp-info --json gives for each file of `plugin_path`, keyed by path.
std::map<std::string, std::string> failures_on_plugin_path(const std::string& plugin_path) {
  const ChildResult result = test_support::run_child(
      {BP_INFO_EXECUTABLE, "--json"}, {{"BACKPLANE_PLUGIN_PATH", plugin_path}}, kChildTimeLimit);
  INFO("stderr: ", result.err);
  REQUIRE_FALSE(result.timed_out);
  REQUIRE(result.exit_code == 0);
  const JsonValue info = parse_json(result.out);
  std::map<std::string, std::string> reasons;
  for (const JsonValue& failure : info["failures"].array()) {
    reasons[failure["path"].string()] = failure["reason"].string();
  }
  return reasons;
}

// load_probe's output for `paths`, which must finish within the time limit.
std::string load_probe_output(const std::vector<std::string>& paths) {
  std::vector<std::string> argv{LOAD_PROBE_EXECUTABLE};
  argv.insert(argv.end(), paths.begin(), paths.end());
  const ChildResult result = test_support::run_child(argv, {}, kChildTimeLimit);
  INFO("stderr: ", result.err);
  REQUIRE_FALSE(result.timed_out);
  CHECK(result.exit_code == 0);
  CHECK(contains(result.out, "host works\n"));
  return result.out;
}

}  // namespace

TEST_CASE("a named pipe on BACKPLANE_PLUGIN_PATH is refused without being opened") {
  const TemporaryFolder folder;
  const std::string pipe = (folder.path() / "libbackplane_pipe.so").string();
  REQUIRE(mkfifo(pipe.c_str(), 0600) == 0);
  const auto reasons = failures_on_plugin_path(pipe + ":" + fixture_path("fixture"));
  REQUIRE(reasons.contains(pipe));
  CHECK(reasons.at(pipe) ==
        "it is a named pipe (FIFO), not a plugin file: name a libbackplane_<backend>.so file (a "
        "link to one is fine)");
  CHECK_FALSE(reasons.contains(fixture_path("fixture")));
}

TEST_CASE("a named pipe given to bp::load_plugin is refused, and the process goes on") {
  const TemporaryFolder folder;
  const std::string pipe = (folder.path() / "plugin.so").string();
  REQUIRE(mkfifo(pipe.c_str(), 0600) == 0);
  const std::string output = load_probe_output({pipe, fixture_path("fixture")});
  CHECK(output.starts_with("failed: could not load plugin " + pipe +
                           ": it is a named pipe (FIFO), not a plugin file"));
  CHECK(contains(output, "\nloaded fixture\n"));
}

TEST_CASE("a device named as a plugin is refused as one") {
  CHECK(failures_on_plugin_path("/dev/null")["/dev/null"].starts_with(
      "it is a character device, not a plugin file"));
  CHECK(load_probe_output({"/dev/null"})
            .starts_with("failed: could not load plugin /dev/null: it is a character device"));
}

TEST_CASE("a link to a plugin file loads as the file does") {
  const TemporaryFolder folder;
  const std::filesystem::path link = folder.path() / "linked.so";
  std::filesystem::create_symlink(fixture_path("fixture"), link);
  CHECK(load_probe_output({link.string()}).starts_with("loaded fixture\n"));
}
