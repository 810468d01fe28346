// BACKPLANE_TRACE: a process that dispatches ops leaves, at exit, a Chrome trace with one
// complete ("X") event per kernel op, on the thread that ran it, in the order it ran; a path
// that cannot be written is a warning, and the process runs untraced.
#include "child_process.h"
#include "fixtures.h"
#include "json_reader.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <vector>

using loader_test::contains;
using loader_test::JsonValue;
using loader_test::parse_json;
using test_support::ChildResult;

namespace {

std::filesystem::path fresh_folder(const std::string& name) {
  const std::filesystem::path folder = std::filesystem::temp_directory_path() / name;
  std::filesystem::remove_all(folder);
  std::filesystem::create_directories(folder);
  return folder;
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

TEST_CASE("BACKPLANE_TRACE writes every dispatched kernel op as a Chrome trace event at exit") {
  const std::filesystem::path folder = fresh_folder("backplane-trace-test");
  const std::filesystem::path trace = folder / "ops.json";
  const int count = 50;
  const ChildResult result =
      test_support::run_child({TRACE_PROBE_EXECUTABLE, std::to_string(count)},
                              {{"BACKPLANE_TRACE", trace.string()}, {"BACKPLANE_BACKENDS", "cpu"}});
  INFO("stderr: " << result.err);
  REQUIRE(result.exit_code == 0);
  // Written whole, through a temporary file renamed over the path.
  CHECK_FALSE(std::filesystem::exists(folder / "ops.json.partial"));
  const JsonValue json = parse_json(read_file(trace));

  std::map<std::string, int> per_name;
  std::map<double, std::vector<const JsonValue*>> per_thread;
  for (const JsonValue& event : json["traceEvents"].array()) {
    CHECK(event["ph"].string() == "X");
    CHECK(event["cat"].string() == "kernel");
    CHECK(event["args"]["device"].string() == "cpu");
    CHECK(event["dur"].number() >= 0);
    ++per_name[event["name"].string()];
    per_thread[event["tid"].number()].push_back(&event);
  }
  CHECK(per_name["add.out"] == count);
  CHECK(per_name["mul.out"] == count);
  CHECK(per_name["softmax.int_out"] == 1);

  // The additions on one thread, the multiplications on another, each thread's ops one after
  // the other.
  std::map<std::string, std::vector<double>> threads_of;
  for (const auto& [tid, events] : per_thread) {
    for (size_t i = 0; i < events.size(); ++i) {
      threads_of[(*events[i])["name"].string()].push_back(tid);
      if (i > 0) {
        const JsonValue& before = *events[i - 1];
        CHECK(before["ts"].number() + before["dur"].number() <= (*events[i])["ts"].number() + 1e-3);
      }
    }
  }
  REQUIRE(threads_of["add.out"].size() == static_cast<size_t>(count));
  REQUIRE(threads_of["mul.out"].size() == static_cast<size_t>(count));
  CHECK(threads_of["add.out"].front() == threads_of["add.out"].back());
  CHECK(threads_of["mul.out"].front() == threads_of["mul.out"].back());
  CHECK(threads_of["add.out"].front() != threads_of["mul.out"].front());
  std::filesystem::remove_all(folder);
}

TEST_CASE("bp::trace_span keeps a span of other work, with its arguments, beside the ops") {
  const std::filesystem::path folder = fresh_folder("backplane-trace-span-test");
  const std::filesystem::path trace = folder / "spans.json";
  const ChildResult result =
      test_support::run_child({TRACE_PROBE_EXECUTABLE, "1", "--span"},
                              {{"BACKPLANE_TRACE", trace.string()}, {"BACKPLANE_BACKENDS", "cpu"}});
  INFO("stderr: " << result.err);
  REQUIRE(result.exit_code == 0);
  const JsonValue json = parse_json(read_file(trace));
  const JsonValue* span = nullptr;
  const JsonValue* softmax = nullptr;
  for (const JsonValue& event : json["traceEvents"].array()) {
    if (event["cat"].string() == "collective") span = &event;
    if (event["name"].string() == "softmax.int_out") softmax = &event;
  }
  REQUIRE(span != nullptr);
  REQUIRE(softmax != nullptr);
  CHECK((*span)["name"].string() == "all_reduce");
  CHECK((*span)["ph"].string() == "X");
  CHECK((*span)["args"]["tensor"].string() == "Float [16]");
  CHECK((*span)["args"]["outcome"].string() == "a \"quoted\" \\ word");
  // The span began before the softmax it surrounds, and ended after it, on the same thread.
  CHECK((*span)["tid"].number() == (*softmax)["tid"].number());
  CHECK((*span)["ts"].number() <= (*softmax)["ts"].number());
  CHECK((*span)["ts"].number() + (*span)["dur"].number() >=
        (*softmax)["ts"].number() + (*softmax)["dur"].number());
  std::filesystem::remove_all(folder);
}

TEST_CASE(
    "a trace that cannot be written at exit is an error on stderr, and the process exits as "
    "usual") {
  const std::filesystem::path folder = fresh_folder("backplane-trace-vanishing-test");
  const std::filesystem::path trace = folder / "ops.json";
  const ChildResult result =
      test_support::run_child({TRACE_PROBE_EXECUTABLE, "3", "--remove-trace-folder"},
                              {{"BACKPLANE_TRACE", trace.string()}});
  CHECK(result.exit_code == 0);
  CHECK(contains(result.err,
                 "[backplane] error: BACKPLANE_TRACE: the trace could not be written to " +
                     trace.string()));
  CHECK_FALSE(std::filesystem::exists(folder));
}

TEST_CASE("a BACKPLANE_TRACE path that cannot be written warns, and the process runs untraced") {
  const std::filesystem::path folder = fresh_folder("backplane-trace-unwritable-test");
  const std::string unwritable = (folder / "missing-folder" / "ops.json").string();
  const ChildResult result =
      test_support::run_child({BP_INFO_EXECUTABLE, "--json"}, {{"BACKPLANE_TRACE", unwritable}});
  REQUIRE(result.exit_code == 0);
  const std::string warning = "BACKPLANE_TRACE='" + unwritable +
                              "' cannot be written (No such file or directory); no trace is kept";
  const JsonValue info = parse_json(result.out);
  bool warned = false;
  for (const JsonValue& w : info["warnings"].array()) {
    warned = warned || w.string().starts_with(warning);
  }
  CHECK(warned);
  CHECK(contains(result.err, "[backplane] warn: " + warning));

  const ChildResult probe =
      test_support::run_child({TRACE_PROBE_EXECUTABLE, "3"}, {{"BACKPLANE_TRACE", unwritable}});
  CHECK(probe.exit_code == 0);
  CHECK_FALSE(contains(probe.err, "could not be written"));  // nothing was attempted at exit
  CHECK_FALSE(std::filesystem::exists(unwritable));
  std::filesystem::remove_all(folder);
}

TEST_CASE(
    "BACKPLANE_TRACE leaves an earlier trace until it writes, follows links, and refuses "
    "what is not a file") {
  const std::filesystem::path folder = fresh_folder("backplane-trace-links-test");
  const std::filesystem::path kept = folder / "results" / "ops.json";
  std::filesystem::create_directories(kept.parent_path());
  { std::ofstream(kept) << "an earlier trace"; }
  const std::filesystem::path link = folder / "latest.json";
  std::filesystem::create_symlink(kept, link);

  // A run that ends before its exit handlers leaves the earlier trace as it was.
  const ChildResult crashed = test_support::run_child(
      {TRACE_PROBE_EXECUTABLE, "2", "--skip-exit-handlers"}, {{"BACKPLANE_TRACE", link.string()}});
  REQUIRE(crashed.exit_code == 0);
  CHECK(read_file(kept) == "an earlier trace");

  // One that exits writes through the link, which stays a link.
  const ChildResult probe =
      test_support::run_child({TRACE_PROBE_EXECUTABLE, "2"}, {{"BACKPLANE_TRACE", link.string()}});
  INFO("stderr: " << probe.err);
  REQUIRE(probe.exit_code == 0);
  CHECK(std::filesystem::is_symlink(link));
  CHECK(parse_json(read_file(kept))["traceEvents"].array().size() >= 2);

  for (const std::string not_a_file : {std::string("/dev/null"), folder.string()}) {
    const ChildResult result =
        test_support::run_child({BP_INFO_EXECUTABLE}, {{"BACKPLANE_TRACE", not_a_file}});
    CHECK(contains(result.err, "BACKPLANE_TRACE='" + not_a_file +
                                   "' is not a regular file (a folder, a device or a pipe)"));
  }
  std::filesystem::remove_all(folder);
}

TEST_CASE(
    "BACKPLANE_TRACE through a dangling link creates the file it points to, and the link "
    "stays") {
  const std::filesystem::path folder = fresh_folder("backplane-trace-dangling-link-test");
  std::filesystem::create_directories(folder / "results");
  const std::filesystem::path link = folder / "latest.json";
  // Relative, so it leads from the link's own folder, wherever the process runs.
  std::filesystem::create_symlink("results/ops.json", link);

  const ChildResult probe =
      test_support::run_child({TRACE_PROBE_EXECUTABLE, "2"}, {{"BACKPLANE_TRACE", link.string()}});
  INFO("stderr: " << probe.err);
  REQUIRE(probe.exit_code == 0);
  CHECK(std::filesystem::is_symlink(link));
  CHECK(std::filesystem::read_symlink(link) == "results/ops.json");
  CHECK(parse_json(read_file(folder / "results" / "ops.json"))["traceEvents"].array().size() >= 2);
  std::filesystem::remove_all(folder);
}

TEST_CASE(
    "a BACKPLANE_TRACE link that leads round in a loop warns, and the links stay as they "
    "are") {
  const std::filesystem::path folder = fresh_folder("backplane-trace-link-loop-test");
  const std::filesystem::path first = folder / "first.json", second = folder / "second.json";
  std::filesystem::create_symlink(second, first);
  std::filesystem::create_symlink(first, second);

  const ChildResult probe =
      test_support::run_child({TRACE_PROBE_EXECUTABLE, "2"}, {{"BACKPLANE_TRACE", first.string()}});
  REQUIRE(probe.exit_code == 0);
  CHECK(contains(probe.err, "[backplane] warn: BACKPLANE_TRACE='" + first.string() +
                                "' is a symbolic link that leads round in a loop, or through "
                                "more than 40 links, without reaching a file; no trace is "
                                "kept. Point the link at a file"));
  CHECK(std::filesystem::read_symlink(first) == second);
  CHECK(std::filesystem::read_symlink(second) == first);
  CHECK(std::distance(std::filesystem::directory_iterator(folder),
                      std::filesystem::directory_iterator()) == 2);
  std::filesystem::remove_all(folder);
}
