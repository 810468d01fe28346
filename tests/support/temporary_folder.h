// A fresh folder under the system's temporary folder for one test, holding a one-line file for
// each name given, and removed with everything in it when the test ends.
#pragma once

#include <doctest/doctest.h>

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <vector>

namespace test_support {

class TemporaryFolder {
 public:
  explicit TemporaryFolder(const std::vector<std::string>& files = {}) {
    std::string name = (std::filesystem::temp_directory_path() / "backplane-test-XXXXXX").string();
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

}  // namespace test_support
