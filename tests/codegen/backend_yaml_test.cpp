// The backend YAML: what it holds, and each mistake docs/generated-code.md lists, reported as
// `file:line:col: error: ...` with exit status 1 and no output written.
#include "backend_loader.h"
#include "test_support.h"
#include "yaml_loader.h"

#include <fmt/format.h>

using namespace bp::codegen;
using namespace bp::codegen::testing;

namespace {

const NativeFunctions& real_ops() {
  static const NativeFunctions ops = load_native_functions(ops_yaml_path().string());
  return ops;
}

// Runs `bp-codegen backend` on `yaml` and checks that it failed with exactly `message`
// (after the file name) and wrote nothing.
void expect_backend_error(const std::string& yaml, const std::string& message) {
  TempDir dir;
  const std::string backend = dir.file("backend.yaml", yaml);
  const CliResult result = run_codegen({"backend", "--ops", ops_yaml_path().string(), "--backend",
                                        backend, "--out", (dir / "out").string()});
  CHECK(result.status == 1);
  CHECK(result.err == backend + ":" + message + "\n");
  CHECK(files_under(dir / "out").empty());
}

}  // namespace

TEST_CASE("a backend YAML names the backend, its namespace, version and supported ops") {
  const BackendConfig config = parse_backend_config(
      "backend: OpenCL\ncpp_namespace: bp::opencl\nversion: 1.2.0\nsupported:\n  - add.out\n  - "
      "mm.out\n",
      "opencl.yaml", real_ops());
  CHECK(config.backend == "OpenCL");
  CHECK(config.lower_case_name() == "opencl");
  CHECK(config.cpp_namespace == "bp::opencl");
  CHECK(config.version == "1.2.0");
  REQUIRE(config.supported.size() == 2);
  CHECK(config.supported[0].function->func.name.str() == "add.out");
  CHECK(config.supported[1].location.str() == "opencl.yaml:6:5");
}

TEST_CASE("a version is digits and dots, with optional pre-release and build parts") {
  for (const char* version : {"1.0.0", "2", "2.1.0-rc1", "1.0.0+acme.3", "0.9.1-beta.2+7"}) {
    CAPTURE(version);
    const BackendConfig config = parse_backend_config(
        fmt::format("backend: X\ncpp_namespace: x\nversion: {}\nsupported: []\n", version),
        "x.yaml", real_ops());
    CHECK(config.version == version);
  }
  for (const char* version : {"banana", "1..0", "1.0.", "v1.0", "1.0-", "1.0 beta"}) {
    CAPTURE(version);
    expect_backend_error(
        fmt::format("backend: X\ncpp_namespace: x\nversion: {}\nsupported: []\n", version),
        fmt::format("3:10: error: version '{}' is not a version such as 1.0.0, 2.1.0-rc1 or "
                    "1.0.0+acme.3",
                    version));
  }
}

TEST_CASE("the version defaults to 0.1.0") {
  const BackendConfig config = parse_backend_config(
      "backend: X\ncpp_namespace: x\nsupported: [add.out]\n", "x.yaml", real_ops());
  CHECK(config.version == "0.1.0");
}

TEST_CASE("the real cpu.yaml is valid") {
  const fs::path cpu =
      ops_yaml_path().parent_path().parent_path().parent_path() / "plugins" / "cpu" / "cpu.yaml";
  if (!fs::exists(cpu)) return;
  const CliResult result =
      run_codegen({"check", "--ops", ops_yaml_path().string(), "--backend", cpu.string()});
  CHECK(result.err == "");
  CHECK(result.status == 0);
}

TEST_CASE("malformed YAML") {
  expect_backend_error(
      "backend: CPU\ncpp_namespace: bp::cpu\nsupported:\n  - add.out\n  - [mul.out\n",
      "6:1: error: malformed YAML: end of sequence flow not found");
  expect_backend_error("backend: CPU\ncpp_namespace: bp::cpu\nsupported:\n\t- add.out\n",
                       "4:2: error: malformed YAML: illegal block entry (line 4 indents with a "
                       "tab; YAML indents with spaces only)");
}

TEST_CASE("an unknown top-level key, with a suggestion") {
  expect_backend_error("backend: CPU\ncpp_namespace: bp::cpu\nsuported:\n  - add.out\n",
                       "3:1: error: unknown key 'suported' (known keys: backend, cpp_namespace, "
                       "version, supported); did you mean 'supported'?");
}

TEST_CASE("a key given twice") {
  expect_backend_error("backend: CPU\ncpp_namespace: bp::cpu\nbackend: GPU\nsupported: []\n",
                       "3:1: error: duplicate key 'backend' (first at line 1)");
}

TEST_CASE("a missing backend, cpp_namespace or supported") {
  expect_backend_error("cpp_namespace: bp::cpu\nsupported:\n  - add.out\n",
                       "1:1: error: missing required key 'backend'");
  expect_backend_error("backend: CPU\nsupported:\n  - add.out\n",
                       "1:1: error: missing required key 'cpp_namespace'");
  expect_backend_error("backend: CPU\ncpp_namespace: bp::cpu\n",
                       "1:1: error: missing required key 'supported'");
}

TEST_CASE("an op that does not exist, with the near miss suggested") {
  expect_backend_error(
      "backend: CPU\ncpp_namespace: bp::cpu\nsupported:\n  - add.out\n  - add.outt\n",
      "5:5: error: unknown operator 'add.outt'; did you mean 'add.out'?");
  expect_backend_error(
      "backend: CPU\ncpp_namespace: bp::cpu\nsupported: [mm.out, softmax_int_out]\n",
      "3:21: error: unknown operator 'softmax_int_out'; did you mean "
      "'softmax.int_out'?");
  expect_backend_error("backend: CPU\ncpp_namespace: bp::cpu\nsupported:\n  - frobnicate\n",
                       "4:5: error: unknown operator 'frobnicate': ops.yaml has no such op");
}

TEST_CASE("an op named with another overload, or in capitals, gets its kernel overloads") {
  // Spelling distance alone would suggest 'sub.out' for 'sum.out'.
  expect_backend_error("backend: CPU\ncpp_namespace: bp::cpu\nsupported:\n  - sum.out\n",
                       "4:5: error: unknown operator 'sum.out'; did you mean 'sum.IntList_out'?");
  expect_backend_error("backend: CPU\ncpp_namespace: bp::cpu\nsupported:\n  - softmax\n",
                       "4:5: error: unknown operator 'softmax'; did you mean 'softmax.int_out'?");
  expect_backend_error("backend: CPU\ncpp_namespace: bp::cpu\nsupported:\n  - ADD.OUT\n",
                       "4:5: error: unknown operator 'ADD.OUT'; did you mean 'add.out'?");
  expect_backend_error("backend: CPU\ncpp_namespace: bp::cpu\nsupported:\n  - eq\n",
                       "4:5: error: unknown operator 'eq'; did you mean 'eq.Tensor_out'?");
}

TEST_CASE("an op that is not structured names the structured op to list") {
  expect_backend_error("backend: CPU\ncpp_namespace: bp::cpu\nsupported:\n  - add.Tensor\n",
                       "4:5: error: 'add.Tensor' is not a structured op; list its structured op "
                       "'add.out' instead (the core runs 'add.Tensor' through it)");
  expect_backend_error("backend: CPU\ncpp_namespace: bp::cpu\nsupported:\n  - matmul\n",
                       "4:5: error: 'matmul' is not a structured op: it is a composite written in "
                       "core over other ops, so backends do not implement it");
}

TEST_CASE("a duplicate entry gives the line of the first") {
  expect_backend_error(
      "backend: CPU\ncpp_namespace: bp::cpu\nsupported:\n  - add.out\n  - mul.out\n  - add.out\n",
      "6:5: error: 'add.out' is listed twice (first at line 4)");
}

TEST_CASE("names that cannot become C++ or a backend name") {
  expect_backend_error(
      "backend: Open-CL\ncpp_namespace: bp::cpu\nsupported: []\n",
      "1:10: error: backend name 'Open-CL' may contain only letters, digits and '_'");
  expect_backend_error(
      "backend: CPU\ncpp_namespace: bp:::cpu\nsupported: []\n",
      "2:16: error: cpp_namespace 'bp:::cpu' is not a C++ namespace such as 'bp::opencl'");
  expect_backend_error(
      "backend: CPU\ncpp_namespace: acme::class\nsupported: []\n",
      "2:16: error: cpp_namespace 'acme::class' is not a C++ namespace such as 'bp::opencl'");
  expect_backend_error("backend: CPU\ncpp_namespace: bp::cpu\nsupported: add.out\n",
                       "3:12: error: 'supported' must be a list of op names such as '- add.out'");
}
