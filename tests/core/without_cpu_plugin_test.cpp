// Without the cpu plugin the host still holds tensors, and an op on them says which plugin is
// missing and why. Plugins load once per process, so the checks run in a child process whose
// BACKPLANE_BACKENDS leaves the cpu plugin out.
#include "core_test_support.h"

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>

using namespace bp;

namespace {

constexpr const char* kChildFlag = "BP_CORE_TEST_WITHOUT_CPU_PLUGIN";
constexpr const char* kChildCase = "in a process without the cpu plugin";

std::string own_executable() {
  std::array<char, 4096> path{};
  const ssize_t length = readlink("/proc/self/exe", path.data(), path.size() - 1);
  REQUIRE(length > 0);
  return std::string(path.data(), static_cast<size_t>(length));
}

}  // namespace

TEST_CASE("in a process without the cpu plugin" *
          doctest::skip(std::getenv(kChildFlag) == nullptr)) {
  const Tensor a = from_vector<float>({1, 2, 3}, {3});
  CHECK(a.slice(0, 1, 3).to_vector<float>() == std::vector<float>{2, 3});
  CHECK(scalar_tensor(2, kInt64).item<int64_t>() == 2);
  coretest::check_error([&] { add(a, a); }, ErrorCode::NotImplemented,
                        {"add.out has no kernel for device cpu: the cpu plugin is not loaded",
                         "BACKPLANE_BACKENDS is '*,!cpu', which may exclude it", "bp-info"});
}

TEST_CASE("host ops without the cpu plugin say that it is not loaded and why") {
  const std::string command = std::string("BACKPLANE_BACKENDS='*,!cpu' ") + kChildFlag + "=1 '" +
                              own_executable() + "' --test-case='" + kChildCase + "' 2>&1";
  FILE* child = popen(command.c_str(), "r");
  REQUIRE(child != nullptr);
  std::string output;
  std::array<char, 4096> chunk{};
  while (const size_t n = std::fread(chunk.data(), 1, chunk.size(), child))
    output.append(chunk.data(), n);
  const int status = pclose(child);
  INFO("child output:\n" << output);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(output.find("1 passed") != std::string::npos);
}
