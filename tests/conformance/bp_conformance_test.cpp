// bp-conformance, as a vendor runs it: it passes the CPU backend with nothing to report; each
// fixture plugin wrong in one way fails, with the op and the fault named; its JSON and JUnit
// say the same; and bad arguments or a backend that does not load are exit status 2 with a
// message saying what to do.
#include "child_process.h"
#include "json_reader.h"

#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

using loader_test::JsonValue;
using test_support::ChildResult;

namespace {

constexpr std::chrono::seconds kTimeLimit{120};

ChildResult conformance(const std::vector<std::string>& arguments) {
  std::vector<std::string> argv{BP_CONFORMANCE_EXECUTABLE};
  argv.insert(argv.end(), arguments.begin(), arguments.end());
  return test_support::run_child(argv, {}, kTimeLimit);
}

std::string fixture(std::string_view folder, std::string_view name) {
  return std::string(BACKPLANE_FIXTURE_DIR) + "/" + std::string(folder) + "/libbackplane_" +
         std::string(name) + ".so";
}

bool contains(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

std::filesystem::path scratch(std::string_view name) {
  return std::filesystem::temp_directory_path() /
         ("bp_conformance_test_" + std::to_string(::getpid()) + "_" + std::string(name));
}

// The JSON report of a run on `plugin` over `ops`.
JsonValue json_report(const std::string& plugin, const std::string& ops, int expected_exit) {
  const auto path = scratch("report.json");
  const ChildResult run = conformance({"--plugin", plugin, "--ops", ops, "--json", path.string()});
  CHECK_MESSAGE(run.exit_code == expected_exit, run.out << run.err);
  const JsonValue report = loader_test::parse_json(read_file(path));
  std::filesystem::remove(path);
  return report;
}

const JsonValue& op_result(const JsonValue& report, std::string_view op) {
  for (const JsonValue& result : report["ops"].array()) {
    if (result["op"].string() == op) return result;
  }
  FAIL("the report has no row for " << op);
  throw std::logic_error("unreachable");
}

const JsonValue& contract_check(const JsonValue& report, std::string_view name) {
  for (const JsonValue& check : report["contract"].array()) {
    if (check["check"].string() == name) return check;
  }
  FAIL("the report has no contract check " << name);
  throw std::logic_error("unreachable");
}

}  // namespace

TEST_CASE("bp-conformance passes the CPU backend on every kernel op, with every contract check") {
  const auto json = scratch("cpu.json"), junit = scratch("cpu.xml");
  const ChildResult run =
      conformance({"--backend", "cpu", "--json", json.string(), "--junit", junit.string()});
  REQUIRE_MESSAGE(run.exit_code == 0, run.out << run.err);
  CHECK(contains(run.out, "result: PASS"));
  CHECK(run.err.empty());

  const JsonValue report = loader_test::parse_json(read_file(json));
  CHECK(report["passed"].boolean());
  CHECK(report["coverage"]["implemented"].number() == report["coverage"]["total"].number());
  CHECK(report["ops"].array().size() == report["coverage"]["total"].number());
  for (const JsonValue& op : report["ops"].array()) {
    CAPTURE(op["op"].string());
    CHECK(op["status"].string() == "pass");
    CHECK(op["cases"].number() > 0);
  }
  for (const JsonValue& check : report["contract"].array()) {
    CAPTURE(check["check"].string());
    CHECK(check["status"].string() != "fail");
  }
  CHECK(contract_check(report, "copies")["status"].string() == "pass");
  CHECK(contract_check(report, "threads")["status"].string() == "pass");
  CHECK(contract_check(report, "shutdown")["status"].string() == "pass");

  const std::string xml = read_file(junit);
  CHECK(contains(xml, "<testcase classname=\"ops\" name=\"add.out\""));
  CHECK(contains(xml, "failures=\"0\""));
  CHECK_FALSE(contains(xml, "<failure"));
  std::filesystem::remove(json);
  std::filesystem::remove(junit);
}

TEST_CASE("bp-conformance: a kernel wrong in one dtype fails in that dtype only") {
  const JsonValue report = json_report(fixture("validate", "fixture_wrong_result"), "add.out", 1);
  const JsonValue& add = op_result(report, "add.out");
  CHECK(add["status"].string() == "fail");
  CHECK(contains(add["worst"]["case"].string(), "Float,"));
  CHECK(contains(add["worst"]["error"].string(), "where the reference gives"));
  for (const JsonValue& failure : add["failures"].array()) {
    CHECK_MESSAGE(failure["case"].string().rfind("Float,", 0) == 0, failure["case"].string());
  }
  // The other ops it implements are right (the threads check, which runs add.out, still fails).
  const JsonValue others =
      json_report(fixture("validate", "fixture_wrong_result"), "mm.out,cat.out", 1);
  CHECK(op_result(others, "mm.out")["status"].string() == "pass");
  CHECK(op_result(others, "cat.out")["status"].string() == "pass");
}

TEST_CASE("bp-conformance: a kernel wrong only for views fails on the views only") {
  const JsonValue report =
      json_report(fixture("conformance", "fixture_noncontiguous_wrong"), "add.out", 1);
  const JsonValue& add = op_result(report, "add.out");
  CHECK(add["status"].string() == "fail");
  for (const JsonValue& failure : add["failures"].array()) {
    const std::string& name = failure["case"].string();
    CHECK_MESSAGE((contains(name, "transposed") || contains(name, "sliced") ||
                   contains(name, "expanded") || contains(name, "broadcast")),
                  name);
  }
}

TEST_CASE("bp-conformance: a kernel that races with itself fails the threads check") {
  const JsonValue report = json_report(fixture("conformance", "fixture_racy"), "add.out", 1);
  CHECK(op_result(report, "add.out")["status"].string() == "pass");
  const JsonValue& threads = contract_check(report, "threads");
  CHECK(threads["status"].string() == "fail");
  CHECK(contains(threads["detail"].string(), "add.out on thread"));
}

TEST_CASE("bp-conformance: a copy that ignores its offset fails the copies check") {
  const JsonValue report =
      json_report(fixture("conformance", "fixture_copy_ignores_offset"), "add.out", 1);
  const JsonValue& copies = contract_check(report, "copies");
  CHECK(copies["status"].string() == "fail");
  CHECK(contains(copies["detail"].string(), "device to host from byte offset 40"));
}

TEST_CASE("bp-conformance: faults the validation layer finds fail their cases, naming them") {
  const JsonValue past_end =
      json_report(fixture("validate", "fixture_writes_past_end"), "add.out", 1);
  CHECK(contains(op_result(past_end, "add.out")["worst"]["error"].string(),
                 "add.out on fixture_writes_past_end:0: the kernel wrote 4 bytes past the end of "
                 "the storage of 'out'"));
  const JsonValue unwritten = json_report(fixture("validate", "fixture_unwritten"), "add.out", 1);
  CHECK(contains(op_result(unwritten, "add.out")["worst"]["error"].string(), "unwritten"));
}

TEST_CASE("bp-conformance: a backend without an op reports it unsupported and refusing it") {
  const JsonValue report =
      json_report(fixture("conformance", "fixture_racy"), "add.out,sub.out", 1);
  const JsonValue& sub = op_result(report, "sub.out");
  CHECK(sub["status"].string() == "unsupported");
  CHECK(contains(sub["note"].string(), "not implemented by fixture_racy"));
  CHECK(contract_check(report, "refusal of a missing op")["status"].string() == "pass");
  CHECK(report["coverage"]["implemented"].number() == 1);
}

TEST_CASE("bp-conformance: --ops and --dtypes narrow the run, --list runs nothing") {
  const auto json = scratch("narrow.json");
  const ChildResult run = conformance(
      {"--backend", "cpu", "--ops", "mm.out,gel*", "--dtypes", "float64", "--json", json.string()});
  REQUIRE_MESSAGE(run.exit_code == 0, run.out << run.err);
  const JsonValue report = loader_test::parse_json(read_file(json));
  std::vector<std::string> ops;
  for (const JsonValue& op : report["ops"].array()) ops.push_back(op["op"].string());
  CHECK(ops == std::vector<std::string>{"gelu.out", "gelu_backward.grad_input", "mm.out"});
  std::filesystem::remove(json);

  const ChildResult list = conformance({"--backend", "cpu", "--list"});
  CHECK(list.exit_code == 0);
  CHECK(contains(list.out, "add.out"));
  CHECK(contains(list.out, "implemented"));
  CHECK_FALSE(contains(list.out, "result:"));
}

TEST_CASE("bp-conformance: bad arguments and backends that do not load are exit status 2") {
  struct Case {
    std::vector<std::string> arguments;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{}, "give the backend to test: --backend NAME or --plugin FILE"},
      {{"--backend", "cpu", "--plugin", "x.so"}, "(one of them)"},
      {{"--backend", "cpu", "--dtypes", "Float33"}, "unknown dtype 'Float33'; the dtypes are"},
      {{"--backend", "cpu", "--ops", "no_such_op*"}, "'no_such_op*' matches no kernel op"},
      {{"--backend", "cpu", "--device", "-1"}, "'-1' is not a device index"},
      {{"--backend", "cpu", "--device", "7"}, "has 1 device(s); --device 7 names none"},
      {{"--backend", "cpu", "--frobnicate"}, "unknown option '--frobnicate'"},
      {{"--backend", "cpu", "--json"}, "option '--json' needs a value"},
      {{"--backend", "cpu", "--junit", "/no/such/folder/report.xml"},
       "--junit: cannot write '/no/such/folder/report.xml': name a file in a folder that exists"},
      {{"--backend", "no_such_backend"}, "no backend named 'no_such_backend' loaded"},
      {{"--plugin", "/no/such/libbackplane_acme.so"}, "/no/such/libbackplane_acme.so"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.message);
    const ChildResult run = conformance(c.arguments);
    CHECK(run.exit_code == 2);
    CHECK_MESSAGE(contains(run.err, c.message), run.err);
  }
}
