// Running a program in a fresh process with a chosen Backplane environment. The registry, and
// each plugin, read BACKPLANE_* once per process, so every test that needs other values runs a
// child.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace test_support {

struct ChildResult {
  int exit_code = -1;      // -1 when the child did not exit normally (a signal)
  bool timed_out = false;  // it ran past its time limit and was killed
  std::string out;
  std::string err;
};

using EnvironmentVariables = std::vector<std::pair<std::string, std::string>>;

// Runs `argv` with this process's environment minus every BACKPLANE_* variable, plus
// `environment`, and waits for it. With a time limit, a child still running when it passes is
// killed (SIGKILL), so that a test of something that might hang fails instead of hanging.
ChildResult run_child(const std::vector<std::string>& argv, const EnvironmentVariables& environment,
                      std::optional<std::chrono::milliseconds> time_limit = std::nullopt);

}  // namespace test_support
