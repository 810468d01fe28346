// The command line: usage errors exit 2 with the usage text; bad input exits 1 with a
// positioned message and leaves no output; success writes every file.
#include "test_support.h"

using namespace bp::codegen::testing;

namespace {

bool mentions_usage(const std::string& err) { return err.find("usage:\n") != std::string::npos; }

}  // namespace

TEST_CASE("bad usage prints the usage to stderr and exits 2") {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {},
           {"generate"},
           {"core", "--ops", "ops.yaml"},
           {"core", "--ops"},
           {"backend", "--ops", "a", "--backend", "b", "--out", "c", "--verbose", "1"},
           {"check", "--ops", "a", "--ops", "b"},
           {"python", "--ops", "a"},
           {"python", "--ops", "a", "--output-dir", "b", "--out", "c"},
       }) {
    const CliResult result = run_codegen(args);
    CHECK(result.status == 2);
    CHECK(mentions_usage(result.err));
    CHECK(result.out.empty());
  }
  CHECK(run_codegen({}).err.starts_with("bp-codegen: missing command\n"));
  CHECK(run_codegen({"core", "--ops", "x"})
            .err.starts_with("bp-codegen: missing option '--public-out'\n"));
  CHECK(run_codegen({"python", "--ops", "x"})
            .err.starts_with("bp-codegen: missing option '--output-dir'\n"));
  CHECK(run_codegen({"help"}).out.find("  bp-codegen python  --ops OPS_YAML --output-dir DIR\n") !=
        std::string::npos);
}

TEST_CASE("core writes all eleven files, and a second run rewrites none") {
  TempDir dir;
  const std::vector<std::string> args = {"core",
                                         "--ops",
                                         ops_yaml_path().string(),
                                         "--derivatives",
                                         derivatives_yaml_path().string(),
                                         "--public-out",
                                         (dir / "public").string(),
                                         "--internal-out",
                                         (dir / "internal").string()};
  CliResult result = run_codegen(args);
  CHECK(result.err == "");
  REQUIRE(result.status == 0);
  CHECK(files_under(dir.path()).size() == 11);
  CHECK(fs::exists(dir / "public/backplane/generated/Functions.h"));
  CHECK(fs::exists(dir / "public/backplane/sdk/kernel_dtypes.h"));
  CHECK(fs::exists(dir / "internal/core_generated/OpTable.h"));
  CHECK(fs::exists(dir / "internal/core_generated/Autograd.cpp"));

  const auto before = fs::last_write_time(dir / "internal/core_generated/Kernels.h");
  result = run_codegen(args);
  CHECK(result.status == 0);
  CHECK(fs::last_write_time(dir / "internal/core_generated/Kernels.h") == before);
}

TEST_CASE("python writes the bindings and the stubs, and a second run rewrites neither") {
  TempDir dir;
  const std::vector<std::string> args = {"python", "--ops", ops_yaml_path().string(),
                                         "--output-dir", (dir / "generated").string()};
  CliResult result = run_codegen(args);
  CHECK(result.err == "");
  REQUIRE(result.status == 0);
  CHECK(files_under(dir.path()).size() == 2);
  CHECK(fs::exists(dir / "generated/python_functions.cpp"));
  CHECK(fs::exists(dir / "generated/_C.pyi"));

  const auto before = fs::last_write_time(dir / "generated/python_functions.cpp");
  result = run_codegen(args);
  CHECK(result.status == 0);
  CHECK(fs::last_write_time(dir / "generated/python_functions.cpp") == before);
}

TEST_CASE("python: an entry Python cannot bind exits 1 with its position and writes nothing") {
  TempDir dir;
  const std::string ops = dir.file("ops.yaml",
                                   "- func: neg(Tensor self) -> Tensor\n"
                                   "  composite: true\n"
                                   "- func: foo(Tensor self, int lambda) -> Tensor\n"
                                   "  composite: true\n");
  const CliResult result =
      run_codegen({"python", "--ops", ops, "--output-dir", (dir / "generated").string()});
  CHECK(result.status == 1);
  CHECK(result.err == ops +
                          ":3:9: error: 'foo': argument 'lambda' is a Python keyword, which "
                          "Python cannot take as a parameter name; rename it\n");
  CHECK(files_under(dir / "generated").empty());
}

TEST_CASE("bad ops.yaml: exit 1, the positioned message, and no output at all") {
  TempDir dir;
  const std::string ops = dir.file("ops.yaml",
                                   "- func: add.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n"
                                   "  structured: true\n"
                                   "  colour: blue\n");
  const CliResult result = run_codegen(
      {"core", "--ops", ops, "--derivatives", derivatives_yaml_path().string(), "--public-out",
       (dir / "public").string(), "--internal-out", (dir / "internal").string()});
  CHECK(result.status == 1);
  CHECK(result.err == ops +
                          ":3:3: error: unknown key 'colour' (known keys: func, variants, "
                          "structured, meta, structured_delegate, composite, pointwise, dtypes, "
                          "dtypes_of)\n");
  CHECK(files_under(dir / "public").empty());
  CHECK(files_under(dir / "internal").empty());
}

TEST_CASE("a missing input file is reported by name") {
  const CliResult result = run_codegen({"check", "--ops", "/nonexistent/ops.yaml"});
  CHECK(result.status == 1);
  CHECK(result.err == "/nonexistent/ops.yaml: error: cannot open the file for reading\n");
}

TEST_CASE("check validates without writing") {
  const CliResult result = run_codegen({"check", "--ops", ops_yaml_path().string()});
  CHECK(result.status == 0);
  CHECK(result.out.empty());
  CHECK(result.err.empty());
}
