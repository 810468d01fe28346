// BACKPLANE_VALIDATE: in a child process (validate_probe), a kernel that leaves part of its
// output unwritten, one that writes its input and one that writes past the end of its output
// are named with the op, the device, the argument and the fault; with compare, so is a kernel
// whose result departs from the host's, with the shapes and dtypes it was given;
// BACKPLANE_VALIDATE_FATAL=1 makes that an error; correct kernels are not reported; and without
// the variable nothing is checked.
#include "child_process.h"
#include "fixtures.h"
#include "json_reader.h"

#include <doctest/doctest.h>

#include <string>
#include <string_view>
#include <vector>

using loader_test::contains;
using loader_test::fixture_dir;
using loader_test::JsonValue;
using loader_test::parse_json;
using test_support::ChildResult;
using test_support::EnvironmentVariables;

namespace {

std::string validate_fixture(std::string_view name) {
  return fixture_dir() + "/validate/libbackplane_" + std::string(name) + ".so";
}

ChildResult run_probe(const std::vector<std::string>& arguments,
                      const EnvironmentVariables& environment) {
  std::vector<std::string> argv{VALIDATE_PROBE_EXECUTABLE};
  argv.insert(argv.end(), arguments.begin(), arguments.end());
  return test_support::run_child(argv, environment, loader_test::kChildTimeLimit);
}

size_t count(std::string_view text, std::string_view part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string_view::npos; at = text.find(part, at + 1)) {
    ++n;
  }
  return n;
}

constexpr std::string_view kUnwritten =
    "BACKPLANE_VALIDATE: add.out on fixture_unwritten:0: the kernel left 1 of 4 elements of "
    "'out' unwritten (first at index 3)";
constexpr std::string_view kWroteInput =
    "BACKPLANE_VALIDATE: relu.out on fixture_writes_input:0: the kernel wrote its input 'self'";
constexpr std::string_view kPastEnd =
    "BACKPLANE_VALIDATE: add.out on fixture_writes_past_end:0: the kernel wrote 4 bytes past the "
    "end of the storage of 'out' (16 bytes)";
// The input of shape [5] reaches the kernel broadcast to the output's shape.
constexpr std::string_view kDeparts =
    "BACKPLANE_VALIDATE=compare: add.out on fixture_wrong_result:0: 'out' departs from the host "
    "reference: worst element at index 0 is 1.5 where the host gives 0.5 (error 1, tolerance "
    "1.5e-05; 20 of 20 elements depart); inputs self [4, 5] Float32, other [4, 5] Float32 strides "
    "[0, 1]; outputs out [4, 5] Float32";

}  // namespace

TEST_CASE("BACKPLANE_VALIDATE=1 names a kernel that leaves an output element unwritten, once") {
  for (const char* dtype : {"float32", "int32"}) {
    CAPTURE(dtype);
    const ChildResult result = run_probe(
        {"unwritten", dtype}, {{"BACKPLANE_VALIDATE", "1"},
                               {"BACKPLANE_PLUGIN_PATH", validate_fixture("fixture_unwritten")}});
    INFO("stdout: ", result.out, "\nstderr: ", result.err);
    REQUIRE(result.exit_code == 0);
    CHECK(contains(result.out, "finding: " + std::string(kUnwritten) + "\n"));
    CHECK(contains(result.out, "findings: 1\n"));
    // The probe adds twice; the finding is logged the first time only.
    CHECK(count(result.err, "[backplane] error: " + std::string(kUnwritten) + "\n") == 1);
  }
}

TEST_CASE("BACKPLANE_VALIDATE=1 names a kernel that writes its input, through device memory") {
  const ChildResult result = run_probe(
      {"writes_input"}, {{"BACKPLANE_VALIDATE", "1"},
                         {"BACKPLANE_PLUGIN_PATH", validate_fixture("fixture_writes_input")}});
  INFO("stdout: ", result.out, "\nstderr: ", result.err);
  REQUIRE(result.exit_code == 0);
  // relu_ then writes its input too, legitimately: in place, its output is its input.
  CHECK(contains(result.out, "finding: " + std::string(kWroteInput) + "\n"));
  CHECK(contains(result.out, "findings: 1\n"));
  CHECK(count(result.err, "[backplane] error: " + std::string(kWroteInput) + "\n") == 1);
}

TEST_CASE("BACKPLANE_VALIDATE_FATAL=1 makes the first finding a bp::Error") {
  const ChildResult result = run_probe(
      {"unwritten", "float32"}, {{"BACKPLANE_VALIDATE", "1"},
                                 {"BACKPLANE_VALIDATE_FATAL", "1"},
                                 {"BACKPLANE_PLUGIN_PATH", validate_fixture("fixture_unwritten")}});
  INFO("stdout: ", result.out, "\nstderr: ", result.err);
  CHECK(result.exit_code == 3);
  CHECK(result.out == "error: " + std::string(kUnwritten) + "\n");
}

TEST_CASE("BACKPLANE_VALIDATE=1 finds nothing wrong with the cpu backend's kernels") {
  // Among them: ops in place, copies and fills through views with gaps, and results whose bits
  // are those of the poisons.
  const ChildResult result =
      run_probe({"cpu"}, {{"BACKPLANE_VALIDATE", "1"}, {"BACKPLANE_BACKENDS", "cpu"}});
  INFO("stdout: ", result.out, "\nstderr: ", result.err);
  REQUIRE(result.exit_code == 0);
  CHECK(result.out == "findings: 0\n");
  CHECK_FALSE(contains(result.err, "BACKPLANE_VALIDATE"));
}

TEST_CASE("BACKPLANE_VALIDATE=1 names a kernel that writes past the end of its output, once") {
  // The fixture's float64 kernel is correct: it runs on blocks that the cache hands out again
  // for storages of other sizes, whose guard zones must be where their own ends are.
  const ChildResult result = run_probe(
      {"past_end"}, {{"BACKPLANE_VALIDATE", "1"},
                     {"BACKPLANE_PLUGIN_PATH", validate_fixture("fixture_writes_past_end")}});
  INFO("stdout: ", result.out, "\nstderr: ", result.err);
  REQUIRE(result.exit_code == 0);
  CHECK(result.out == "finding: " + std::string(kPastEnd) + "\nfindings: 1\n");
  CHECK(count(result.err, "[backplane] error: " + std::string(kPastEnd) + "\n") == 1);
}

TEST_CASE("BACKPLANE_VALIDATE=compare names a kernel whose result departs from the host's") {
  const ChildResult result = run_probe(
      {"wrong_result"}, {{"BACKPLANE_VALIDATE", "compare"},
                         {"BACKPLANE_PLUGIN_PATH", validate_fixture("fixture_wrong_result")}});
  INFO("stdout: ", result.out, "\nstderr: ", result.err);
  REQUIRE(result.exit_code == 0);
  CHECK(result.out == "finding: " + std::string(kDeparts) + "\nfindings: 1\n");
  // The probe adds twice; the finding is logged the first time only.
  CHECK(count(result.err, "[backplane] error: " + std::string(kDeparts) + "\n") == 1);
}

TEST_CASE("BACKPLANE_VALIDATE=1 does not compare results with the host's") {
  const ChildResult result = run_probe(
      {"wrong_result"}, {{"BACKPLANE_VALIDATE", "1"},
                         {"BACKPLANE_PLUGIN_PATH", validate_fixture("fixture_wrong_result")}});
  INFO("stdout: ", result.out, "\nstderr: ", result.err);
  REQUIRE(result.exit_code == 0);
  CHECK(result.out == "findings: 0\n");
}

TEST_CASE("BACKPLANE_VALIDATE=compare finds nothing wrong with correct kernels on a device") {
  // add, mm, sum and cat on a device with memory of its own: views with gaps and inputs
  // broadcast, in place, 0-size tensors and tensor lists.
  const ChildResult result = run_probe(
      {"right_result"}, {{"BACKPLANE_VALIDATE", "compare"},
                         {"BACKPLANE_PLUGIN_PATH", validate_fixture("fixture_wrong_result")}});
  INFO("stdout: ", result.out, "\nstderr: ", result.err);
  REQUIRE(result.exit_code == 0);
  CHECK(result.out == "findings: 0\n");
  CHECK_FALSE(contains(result.err, "BACKPLANE_VALIDATE"));
}

TEST_CASE("BACKPLANE_VALIDATE_FATAL=1 makes a departure from the host's result a bp::Error") {
  const ChildResult result = run_probe(
      {"wrong_result"}, {{"BACKPLANE_VALIDATE", "compare"},
                         {"BACKPLANE_VALIDATE_FATAL", "1"},
                         {"BACKPLANE_PLUGIN_PATH", validate_fixture("fixture_wrong_result")}});
  INFO("stdout: ", result.out, "\nstderr: ", result.err);
  CHECK(result.exit_code == 3);
  CHECK(result.out == "error: " + std::string(kDeparts) + "\n");
}

TEST_CASE("without BACKPLANE_VALIDATE, kernels are not checked") {
  for (const char* variable : {"", "0"}) {
    CAPTURE(variable);
    const std::string plugins = validate_fixture("fixture_unwritten") + ":" +
                                validate_fixture("fixture_writes_input") + ":" +
                                validate_fixture("fixture_wrong_result");
    // (fixture_writes_past_end would write past the end of a block with no guard zone.)
    for (const std::vector<std::string>& arguments :
         {std::vector<std::string>{"unwritten", "float32"}, {"writes_input"}, {"wrong_result"}}) {
      const ChildResult result = run_probe(arguments, {{"BACKPLANE_VALIDATE", variable},
                                                       {"BACKPLANE_VALIDATE_FATAL", "1"},
                                                       {"BACKPLANE_PLUGIN_PATH", plugins}});
      INFO("stdout: ", result.out, "\nstderr: ", result.err);
      CHECK(result.exit_code == 0);
      CHECK(result.out == "findings: 0\n");
      CHECK_FALSE(contains(result.err, "BACKPLANE_VALIDATE: "));
    }
  }
}

TEST_CASE("a bad BACKPLANE_VALIDATE or a lone BACKPLANE_VALIDATE_FATAL is a warning") {
  const ChildResult result =
      test_support::run_child({BP_INFO_EXECUTABLE, "--json"}, {{"BACKPLANE_VALIDATE", "yes"},
                                                               {"BACKPLANE_VALIDATE_FATAL", "1"},
                                                               {"BACKPLANE_BACKENDS", "cpu"}});
  INFO("stderr: ", result.err);
  REQUIRE(result.exit_code == 0);
  const JsonValue info = parse_json(result.out);
  std::vector<std::string> warnings;
  for (const JsonValue& warning : info["warnings"].array()) warnings.push_back(warning.string());
  CHECK(warnings == std::vector<std::string>{
                        "BACKPLANE_VALIDATE='yes' is not a validation setting: use 1 (check that "
                        "every kernel writes all of its outputs, none of its inputs and nothing "
                        "past their end), compare (those checks, and every kernel's results "
                        "against the host's) or 0; validation stays off",
                        "BACKPLANE_VALIDATE_FATAL=1 has no effect without BACKPLANE_VALIDATE=1 or "
                        "compare: set both to stop at a kernel's first finding"});
  REQUIRE(info["validation_findings"].is_array());
  CHECK(info["validation_findings"].array().empty());
}
