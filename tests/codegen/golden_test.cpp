// bp-codegen's output for a small ops.yaml and backend YAML, compared byte for byte with the
// files in golden/. See golden/README.md to regenerate them after an intended change.
#include <cstdlib>

#include "backend_loader.h"
#include "derivatives_loader.h"
#include "gen_backend.h"
#include "gen_conformance.h"
#include "gen_core.h"
#include "gen_python.h"
#include "test_support.h"
#include "yaml_loader.h"

using namespace bp::codegen;
using namespace bp::codegen::testing;

namespace {

bool updating_golden_files() {
  const char* update = std::getenv("BP_UPDATE_GOLDEN");
  return update && std::string(update) == "1";
}

// Compares each generated file with golden/<subdir>/<file name>.golden (the suffix keeps the
// expected texts from passing for generated build files), or rewrites the golden file
// when BP_UPDATE_GOLDEN=1.
void check_against_golden(const std::vector<GeneratedFile>& files, const std::string& subdir) {
  for (const GeneratedFile& file : files) {
    const fs::path golden = golden_dir() / subdir / (file.path.filename().string() + ".golden");
    CAPTURE(golden);
    if (updating_golden_files()) {
      write_file(golden, file.content);
      continue;
    }
    REQUIRE_MESSAGE(fs::exists(golden), "missing golden file; see golden/README.md");
    CHECK(file.content == read_file(golden));
  }
}

}  // namespace

TEST_CASE("golden: the backend files for vendor.yaml") {
  const NativeFunctions ops = load_native_functions((golden_dir() / "ops_small.yaml").string());
  const BackendConfig config = load_backend_config((golden_dir() / "vendor.yaml").string(), ops);
  const auto files = generate_backend(config, "out");
  REQUIRE(files.size() == 2);
  CHECK(files[0].path == fs::path("out") / "VendorNativeFunctions.h");
  CHECK(files[1].path == fs::path("out") / "RegisterVendor.cpp");
  check_against_golden(files, "backend");
}

TEST_CASE("golden: the core files for ops_small.yaml and derivatives_small.yaml") {
  const NativeFunctions ops = load_native_functions((golden_dir() / "ops_small.yaml").string());
  const Derivatives derivatives =
      load_derivatives((golden_dir() / "derivatives_small.yaml").string(), ops);
  const auto files = generate_core(ops, derivatives, "public", "internal");
  REQUIRE(files.size() == 11);
  check_against_golden(files, "core");
}

TEST_CASE("golden: the Python bindings and stubs for ops_small.yaml") {
  const NativeFunctions ops = load_native_functions((golden_dir() / "ops_small.yaml").string());
  const auto files = generate_python(ops, "generated");
  REQUIRE(files.size() == 2);
  check_against_golden(files, "python");
}

TEST_CASE("golden: the conformance kit's kernel op table for ops_small.yaml") {
  const NativeFunctions ops = load_native_functions((golden_dir() / "ops_small.yaml").string());
  check_against_golden({{"generated/KernelOpTable.cpp", generate_kernel_op_table(ops)}},
                       "conformance");
}
