#include "child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace test_support {
namespace {

// A file the child writes its output to: files rather than pipes, so that a child that
// writes much to both streams cannot block on a full pipe.
class CaptureFile {
 public:
  CaptureFile() {
    char name[] = "/tmp/backplane-child-output-XXXXXX";
    const int fd = mkstemp(name);
    if (fd < 0) throw std::runtime_error("mkstemp failed: " + std::string(std::strerror(errno)));
    close(fd);
    path_ = name;
  }
  ~CaptureFile() { std::remove(path_.c_str()); }
  CaptureFile(const CaptureFile&) = delete;
  CaptureFile& operator=(const CaptureFile&) = delete;

  const std::string& path() const { return path_; }
  std::string contents() const {
    std::ifstream in(path_, std::ios::binary);
    std::stringstream buffer;
    buffer << in.rdbuf();
    return buffer.str();
  }

 private:
  std::string path_;
};

std::vector<std::string> child_environment(const EnvironmentVariables& environment) {
  std::vector<std::string> entries;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    if (std::strncmp(*entry, "BACKPLANE_", 10) != 0) entries.emplace_back(*entry);
  }
  for (const auto& [name, value] : environment) entries.push_back(name + "=" + value);
  return entries;
}

std::vector<char*> c_strings(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  for (std::string& s : strings) pointers.push_back(s.data());
  pointers.push_back(nullptr);
  return pointers;
}

// The child's wait status; with WNOHANG, nothing while it is still running.
std::optional<int> wait_status(pid_t pid, int options) {
  int status = 0;
  pid_t result = 0;
  while ((result = waitpid(pid, &status, options)) < 0) {
    if (errno != EINTR) {
      throw std::runtime_error("waitpid failed: " + std::string(std::strerror(errno)));
    }
  }
  if (result == 0) return std::nullopt;
  return status;
}

// The child's wait status, or nothing when it was still running at the time limit and was
// killed.
std::optional<int> wait_within(pid_t pid, std::optional<std::chrono::milliseconds> time_limit) {
  if (!time_limit) return wait_status(pid, 0);
  const auto deadline = std::chrono::steady_clock::now() + *time_limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (const std::optional<int> status = wait_status(pid, WNOHANG)) return status;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  kill(pid, SIGKILL);
  wait_status(pid, 0);
  return std::nullopt;
}

}  // namespace

ChildResult run_child(const std::vector<std::string>& argv, const EnvironmentVariables& environment,
                      std::optional<std::chrono::milliseconds> time_limit) {
  CaptureFile out, err;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out.path().c_str(), O_WRONLY | O_TRUNC,
                                   0);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err.path().c_str(), O_WRONLY | O_TRUNC,
                                   0);

  std::vector<std::string> arguments = argv;
  std::vector<std::string> variables = child_environment(environment);
  std::vector<char*> c_arguments = c_strings(arguments);
  std::vector<char*> c_variables = c_strings(variables);
  pid_t pid = 0;
  const int spawn_error =
      posix_spawn(&pid, c_arguments[0], &actions, nullptr, c_arguments.data(), c_variables.data());
  posix_spawn_file_actions_destroy(&actions);
  if (spawn_error != 0) {
    throw std::runtime_error("cannot run " + argv[0] + ": " + std::strerror(spawn_error));
  }
  const std::optional<int> status = wait_within(pid, time_limit);
  if (!status) return {-1, true, out.contents(), err.contents()};
  return {WIFEXITED(*status) ? WEXITSTATUS(*status) : -1, false, out.contents(), err.contents()};
}

}  // namespace test_support
