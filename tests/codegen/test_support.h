// Shared helpers for the bp-codegen suite: where the inputs are, temporary folders, and
// running the command line in-process.
#pragma once

#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli.h"
#include "diagnostics.h"

namespace bp::codegen::testing {

namespace fs = std::filesystem;

// This folder, ops.yaml and derivatives.yaml come from the build (tests/CMakeLists.txt) as absolute
// paths:
// __FILE__ is relative wherever the compiler is given relative paths (ccache's base_dir).
inline fs::path tests_dir() { return BP_CODEGEN_TESTS_DIR; }
inline fs::path golden_dir() { return tests_dir() / "golden"; }

inline fs::path ops_yaml_path() { return BP_OPS_YAML; }
inline fs::path derivatives_yaml_path() { return BP_DERIVATIVES_YAML; }

inline std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), "cannot read " << path);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

inline void write_file(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

// A fresh folder, removed with everything in it at the end of the test.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "bp-codegen-test-XXXXXX").string();
    REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const fs::path& path() const { return path_; }
  fs::path operator/(const std::string& name) const { return path_ / name; }
  // Writes `text` to `name` in this folder and returns the file's path.
  std::string file(const std::string& name, const std::string& text) const {
    write_file(path_ / name, text);
    return (path_ / name).string();
  }

 private:
  fs::path path_;
};

// Every regular file under `dir` (none when it does not exist).
inline std::vector<fs::path> files_under(const fs::path& dir) {
  std::vector<fs::path> files;
  if (!fs::exists(dir)) return files;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (entry.is_regular_file()) files.push_back(entry.path());
  }
  return files;
}

// The message of the CodegenError that `body` throws, or a note that it threw none.
template <typename Body>
std::string error_of(Body&& body) {
  try {
    body();
  } catch (const CodegenError& e) {
    return e.what();
  }
  return "<no error>";
}

struct CliResult {
  int status = -1;
  std::string out;
  std::string err;
};

inline CliResult run_codegen(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  CliResult result;
  result.status = run_cli(args, out, err);
  result.out = out.str();
  result.err = err.str();
  return result;
}

}  // namespace bp::codegen::testing
