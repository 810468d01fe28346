// bp-conformance: proves a backend right without the project's source tree. It runs every
// kernel op the backend lists through the conformance cases (conformance/src/samples_*.cpp)
// against the CPU backend as the host reference, checks the plugin contract, and reports per
// op, with an exit status for CI.
#include <backplane/conformance/contract.h>
#include <backplane/conformance/kernel_op_table.h>
#include <backplane/conformance/op_info.h>
#include <backplane/conformance/report.h>
#include <backplane/conformance/runner.h>
#include <backplane/sdk/dtype_set.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <fnmatch.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace {

using bp::conformance::ConformanceReport;
using bp::conformance::ContractCheck;
using bp::conformance::implements;
using bp::conformance::KernelOp;
using bp::conformance::OpResult;
using bp::conformance::OpStatus;

constexpr std::string_view kUsage =
    "usage: bp-conformance (--backend NAME | --plugin FILE) [--device INDEX] [--ops LIST]\n"
    "                      [--dtypes LIST] [--json FILE] [--junit FILE] [--list]\n"
    "\n"
    "Runs every kernel op a Backplane backend implements through the conformance cases (each\n"
    "dtype the op takes, edge shapes, broadcasting, transposed, sliced and expanded inputs,\n"
    "special values, the functional, out= and in-place forms) and compares each result with the\n"
    "CPU backend's on the host, with the tolerances of <backplane/sdk/tolerance.hpp>; then checks\n"
    "the plugin contract (devices, allocation, copies, events, refusals, threads, shutdown).\n"
    "\n"
    "  --backend NAME   test the backend of that name (\"acme\"), found as any program finds it\n"
    "                   (BACKPLANE_PLUGIN_PATH, then next to libbackplane)\n"
    "  --plugin FILE    test the plugin in FILE (libbackplane_acme.so)\n"
    "  --device INDEX   which of the backend's devices (default 0)\n"
    "  --ops LIST       only these kernel ops: comma-separated names or globs (add.out,conv*)\n"
    "  --dtypes LIST    only these dtypes: comma-separated (Float32,Half,Int64)\n"
    "  --json FILE      also write the results as JSON\n"
    "  --junit FILE     also write the results as JUnit XML, for a CI's test view\n"
    "  --list           list the kernel ops, whether the backend implements each, and their\n"
    "                   dtypes; run nothing\n"
    "  -h, --help       print this help\n"
    "\n"
    "The CPU backend is loaded too: it computes the reference. Every case runs with\n"
    "BACKPLANE_VALIDATE=1 (a kernel that leaves an output element unwritten, writes an input or\n"
    "writes past the end of device memory fails its case), and BACKPLANE_FALLBACK is ignored, so\n"
    "that every case runs on the backend's own kernels.\n"
    "\n"
    "Exit status: 0 when every case and check passes (unsupported ops do not fail), 1 when one\n"
    "fails, 2 for a bad argument or a backend that does not load.\n";

constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;

struct UsageError {
  std::string message;
};

struct Options {
  std::string backend;
  std::string plugin;
  int64_t device = 0;
  std::vector<std::string> ops;
  std::vector<bp::DType> dtypes;
  std::string json, junit;
  bool list = false;
  bool shutdown_probe = false;  // internal: the child process of the shutdown check
};

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  size_t begin = 0;
  while (begin <= text.size()) {
    const size_t end = std::min(text.find(',', begin), text.size());
    if (end > begin) items.push_back(text.substr(begin, end - begin));
    begin = end + 1;
  }
  return items;
}

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bp::DType parse_dtype(const std::string& name) {
  std::vector<std::string> known;
  for (const bp::DType dtype : bp::kAllDTypes) {
    const std::string_view constant = bp::plugin::dtype_constant_name(dtype);
    if (lower(name) == lower(constant) || lower(name) == lower(bp::dtype_name(dtype))) return dtype;
    known.emplace_back(constant);
  }
  throw UsageError{
      fmt::format("--dtypes: unknown dtype '{}'; the dtypes are {}", name, fmt::join(known, ", "))};
}

Options parse_options(int argc, char** argv) {
  Options o;
  const auto value = [&](int& i) -> std::string {
    if (i + 1 >= argc) throw UsageError{fmt::format("option '{}' needs a value", argv[i])};
    return argv[++i];
  };
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--backend") {
      o.backend = value(i);
    } else if (arg == "--plugin") {
      o.plugin = value(i);
    } else if (arg == "--device") {
      const std::string text = value(i);
      char* end = nullptr;
      o.device = std::strtoll(text.c_str(), &end, 10);
      if (text.empty() || *end != '\0' || o.device < 0) {
        throw UsageError{fmt::format("--device: '{}' is not a device index (0, 1, ...)", text)};
      }
    } else if (arg == "--ops") {
      o.ops = split_list(value(i));
      if (o.ops.empty()) throw UsageError{"--ops: give at least one op name or glob"};
    } else if (arg == "--dtypes") {
      for (const std::string& name : split_list(value(i))) o.dtypes.push_back(parse_dtype(name));
      if (o.dtypes.empty()) throw UsageError{"--dtypes: give at least one dtype"};
    } else if (arg == "--json") {
      o.json = value(i);
    } else if (arg == "--junit") {
      o.junit = value(i);
    } else if (arg == "--list") {
      o.list = true;
    } else if (arg == "--shutdown-probe") {
      o.shutdown_probe = true;
    } else {
      throw UsageError{fmt::format("unknown option '{}'", arg)};
    }
  }
  if (o.backend.empty() == o.plugin.empty()) {
    throw UsageError{"give the backend to test: --backend NAME or --plugin FILE (one of them)"};
  }
  return o;
}

// The environment every run works in: the backend under test and the CPU backend (the
// reference), and no fallback that would hide a missing kernel.
void prepare_environment(const Options& o) {
  const char* fallback = std::getenv("BACKPLANE_FALLBACK");
  if (fallback && std::string_view(fallback) != "off" && !o.shutdown_probe) {
    fmt::print(stderr,
               "bp-conformance: ignoring BACKPLANE_FALLBACK={}: the backend's own "
               "kernels are what is tested\n",
               fallback);
  }
  setenv("BACKPLANE_FALLBACK", "off", 1);
  // Every case also runs through the validation layer, whose first finding fails it: an
  // output element left unwritten, an input written, a write past the end of device memory.
  setenv("BACKPLANE_VALIDATE", "1", 1);
  setenv("BACKPLANE_VALIDATE_FATAL", "1", 1);
  const std::string backends =
      o.backend.empty() || lower(o.backend) == "cpu" ? "cpu" : "cpu," + lower(o.backend);
  setenv("BACKPLANE_BACKENDS", backends.c_str(), 1);
}

// The backend under test, loaded; a bp::Error that says why when it is not.
bp::PluginInfo load_backend(const Options& o) {
  if (!o.plugin.empty()) return bp::load_plugin(o.plugin);
  const bp::RuntimeInfo runtime = bp::runtime_info();
  std::vector<std::string> loaded;
  for (const bp::PluginInfo& plugin : runtime.plugins) {
    if (lower(plugin.name) == lower(o.backend)) return plugin;
    loaded.push_back(plugin.name);
  }
  std::string message =
      fmt::format("no backend named '{}' loaded (loaded: {})", o.backend, fmt::join(loaded, ", "));
  for (const bp::PluginFailure& failure : runtime.failures)
    message += fmt::format("\n  {}: {}", failure.path, failure.reason);
  if (runtime.failures.empty()) {
    message += "\nname its folder or file in BACKPLANE_PLUGIN_PATH, or pass --plugin FILE";
  }
  throw bp::Error(message);
}

bool selected(const Options& o, std::string_view op) {
  if (o.ops.empty()) return true;
  return std::any_of(o.ops.begin(), o.ops.end(), [&](const std::string& pattern) {
    return fnmatch(pattern.c_str(), std::string(op).c_str(), 0) == 0;
  });
}

void check_op_patterns(const Options& o) {
  for (const std::string& pattern : o.ops) {
    const auto table = bp::conformance::kernel_op_table();
    const bool matches = std::any_of(table.begin(), table.end(), [&](const KernelOp& op) {
      return fnmatch(pattern.c_str(), std::string(op.name).c_str(), 0) == 0;
    });
    if (!matches) {
      throw UsageError{
          fmt::format("--ops: '{}' matches no kernel op of ops.yaml; --list shows "
                      "them",
                      pattern)};
    }
  }
}

void print_list(const bp::PluginInfo& plugin) {
  for (const KernelOp& op : bp::conformance::kernel_op_table()) {
    std::vector<std::string_view> dtypes;
    for (const bp::DType dtype : bp::plugin::dtypes_in(op.dtypes))
      dtypes.push_back(bp::plugin::dtype_constant_name(dtype));
    fmt::print("{:<45} {:<15} {}\n", op.name,
               implements(plugin, op.name) ? "implemented" : "not implemented",
               fmt::join(dtypes, ","));
  }
}

// Shutdown: a child process loads the backend, runs an op on the device and exits; it must
// exit with status 0, within a minute.
ContractCheck check_shutdown(const Options& o, const char* self) {
  std::vector<std::string> args = {self, "--shutdown-probe", "--device", std::to_string(o.device)};
  if (o.plugin.empty()) {
    args.insert(args.end(), {"--backend", o.backend});
  } else {
    args.insert(args.end(), {"--plugin", o.plugin});
  }
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  if (posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, argv.data(), environ) != 0) {
    return {"shutdown", ContractCheck::Outcome::Skipped, "could not start a child process"};
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return {"shutdown", ContractCheck::Outcome::Fail,
              "a process that ran an op on the device did not exit within 60 s"};
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (WIFSIGNALED(status)) {
    return {"shutdown", ContractCheck::Outcome::Fail,
            fmt::format("a process that ran an op on the device died of signal {} at exit",
                        WTERMSIG(status))};
  }
  if (WEXITSTATUS(status) != 0) {
    return {"shutdown", ContractCheck::Outcome::Fail,
            fmt::format("a process that ran an op on the device exited with status {}",
                        WEXITSTATUS(status))};
  }
  return {"shutdown", ContractCheck::Outcome::Pass, {}};
}

int shutdown_probe(const bp::PluginInfo& plugin, bp::Device device) {
  const bp::Tensor x = bp::ones({64}, bp::kFloat32, bp::Device::cpu()).to(device);
  const bp::Tensor y = implements(plugin, "add.out") ? bp::add(x, x) : x;
  return y.cpu().numel() == 64 ? 0 : 1;
}

// A report file that cannot be written is refused before the run, not after it.
void check_writable(std::string_view option, const std::string& path) {
  if (path.empty()) return;
  if (!std::ofstream(path, std::ios::app)) {
    throw UsageError{
        fmt::format("{}: cannot write '{}': name a file in a folder that exists and "
                    "that you may write to",
                    option, path)};
  }
}

void write_file(const std::string& path, const ConformanceReport& report,
                void (*write)(std::ostream&, const ConformanceReport&)) {
  std::ofstream file(path);
  if (file) write(file, report);
  if (!file) throw bp::Error(fmt::format("cannot write '{}'", path));
}

// The CPU backend computes every reference: without it nothing can be compared.
void require_reference_backend() {
  const bp::RuntimeInfo runtime = bp::runtime_info();
  for (const bp::PluginInfo& plugin : runtime.plugins) {
    if (plugin.name == "cpu") return;
  }
  std::string message =
      "the CPU backend, which computes the reference of every case, did not load: install "
      "libbackplane_cpu.so next to libbackplane (lib/backplane/plugins) or name it in "
      "BACKPLANE_PLUGIN_PATH";
  for (const bp::PluginFailure& failure : runtime.failures)
    message += fmt::format("\n  {}: {}", failure.path, failure.reason);
  throw bp::Error(message);
}

int run(const Options& o, const char* self) {
  prepare_environment(o);
  const bp::PluginInfo plugin = load_backend(o);
  require_reference_backend();
  if (o.device >= static_cast<int64_t>(plugin.devices.size())) {
    throw bp::Error(fmt::format("backend '{}' has {} device(s); --device {} names none{}",
                                plugin.name, plugin.devices.size(), o.device,
                                plugin.device_note.empty() ? "" : ": " + plugin.device_note));
  }
  const bp::Device device = plugin.devices[static_cast<size_t>(o.device)].device;
  if (o.shutdown_probe) return shutdown_probe(plugin, device);
  if (o.list) {
    print_list(plugin);
    return 0;
  }
  check_op_patterns(o);
  check_writable("--json", o.json);
  check_writable("--junit", o.junit);

  const auto start = std::chrono::steady_clock::now();
  ConformanceReport report;
  report.backend = plugin.name;
  report.plugin = plugin.path;
  report.device = device.str();
  bp::conformance::RunOptions run_options;
  run_options.dtypes = o.dtypes;
  for (const KernelOp& op : bp::conformance::kernel_op_table()) {
    ++report.total;
    const bool implemented = implements(plugin, op.name);
    report.implemented += implemented ? 1 : 0;
    if (!selected(o, op.name)) continue;
    if (!implemented) {
      OpResult result;
      result.op = std::string(op.name);
      result.status = OpStatus::Unsupported;
      result.note = fmt::format("not implemented by {}", plugin.name);
      report.ops.push_back(std::move(result));
      continue;
    }
    report.ops.push_back(bp::conformance::run_op(op, device, run_options));
  }
  report.contract = bp::conformance::check_contract(plugin, device);
  report.contract.push_back(check_shutdown(o, self));
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  write_table(std::cout, report);
  if (!o.json.empty()) write_file(o.json, report, bp::conformance::write_json);
  if (!o.junit.empty()) write_file(o.junit, report, bp::conformance::write_junit);
  return report.passed() ? 0 : kExitFailed;
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      std::cout << kUsage;
      return 0;
    }
  }
  try {
    return run(parse_options(argc, argv), argv[0]);
  } catch (const UsageError& e) {
    std::cerr << "bp-conformance: " << e.message << "\n\n" << kUsage;
    return kExitUsage;
  } catch (const bp::Error& e) {
    std::cerr << "bp-conformance: " << e.what() << "\n";
    return kExitUsage;
  }
}
