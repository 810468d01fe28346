#include <backplane/conformance/contract.h>

#include <backplane/conformance/kernel_op_table.h>
#include <backplane/conformance/op_info.h>
#include <backplane/conformance/samples.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <mutex>
#include <thread>

#include "case_comparison.h"

namespace bp::conformance {

std::string_view name_of(ContractCheck::Outcome outcome) {
  switch (outcome) {
    case ContractCheck::Outcome::Pass: return "pass";
    case ContractCheck::Outcome::Fail: return "fail";
    case ContractCheck::Outcome::Skipped: return "skipped";
  }
  return "?";
}

bool implements(const PluginInfo& plugin, std::string_view op) {
  return std::find(plugin.ops.begin(), plugin.ops.end(), op) != plugin.ops.end();
}

namespace {

// A check fails by throwing CheckFailed (or any exception) with what went wrong.
struct CheckFailed {
  std::string detail;
};

void expect(bool condition, const std::string& detail) {
  if (!condition) throw CheckFailed{detail};
}

ContractCheck run_check(std::string name, const std::function<void()>& check) {
  ContractCheck result{std::move(name), ContractCheck::Outcome::Pass, {}};
  try {
    check();
  } catch (const CheckFailed& e) {
    result.outcome = ContractCheck::Outcome::Fail;
    result.detail = e.detail;
  } catch (const std::exception& e) {
    result.outcome = ContractCheck::Outcome::Fail;
    result.detail = fmt::format("raised: {}", e.what());
  }
  return result;
}

ContractCheck skipped(std::string name, std::string why) {
  return {std::move(name), ContractCheck::Outcome::Skipped, std::move(why)};
}

void check_devices(const PluginInfo& plugin, Device device) {
  expect(!plugin.devices.empty(), "the backend lists no devices");
  for (const DeviceInfo& info : plugin.devices) {
    expect(!info.name.empty(), fmt::format("{} has no name", info.device.str()));
    expect(info.device.type() == device.type(),
           fmt::format("{} is listed by the backend of {}", info.device.str(), device.str()));
  }
  expect(std::count_if(plugin.devices.begin(), plugin.devices.end(),
                       [&](const DeviceInfo& d) { return d.device == device; }) == 1,
         fmt::format("{} is listed {} times", device.str(),
                     std::count_if(plugin.devices.begin(), plugin.devices.end(),
                                   [&](const DeviceInfo& d) { return d.device == device; })));
}

void check_allocations(Device device) {
  for (const int64_t bytes : {int64_t{0}, int64_t{1}, int64_t{4096}, int64_t{1} << 22}) {
    const Tensor t = empty({bytes}, kUInt8, device);
    expect(t.numel() == bytes && t.device() == device,
           fmt::format("an allocation of {} bytes gave a tensor of {} on {}", bytes, t.numel(),
                       t.device().str()));
  }
  // Many live at once, freed in an order of their own.
  std::vector<Tensor> live;
  for (int i = 0; i < 200; ++i) live.push_back(empty({1 + 37 * i}, kUInt8, device));
  for (size_t i = 0; i < live.size(); i += 2) live[i] = Tensor();
  live.clear();
}

Values iota(int64_t n) {
  Values values(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) values[static_cast<size_t>(i)] = static_cast<double>(i);
  return values;
}

void expect_values(const Tensor& t, const Values& want, const std::string& what) {
  const Values got = values_of(t);
  expect(got.size() == want.size(),
         fmt::format("{}: {} elements where {} were copied", what, got.size(), want.size()));
  for (size_t i = 0; i < got.size(); ++i) {
    expect(got[i] == want[i],
           fmt::format("{}: element {} is {} where {} was copied", what, i, got[i], want[i]));
  }
}

Values part(const Values& values, size_t begin, size_t end) {
  return Values(values.begin() + static_cast<std::ptrdiff_t>(begin),
                values.begin() + static_cast<std::ptrdiff_t>(end));
}

// Each direction with a nonzero offset on the device side, and with no bytes. Only copies run on
// the device: a backend need not have kernels for these checks. Copying into part of a device
// tensor goes through the backend's copy_ kernel, where it has one.
void check_copies(Device device, bool has_copy_kernel) {
  const Values values = iota(100);
  const Tensor host = make_tensor(values, {100}, kInt32, Device::cpu());
  const Tensor on_device = host.to(device);
  expect_values(on_device, values, "host to device, whole");
  expect_values(on_device.slice(0, 10, 20), part(values, 10, 20),
                "device to host from byte offset 40");
  expect(empty({0}, kInt32, Device::cpu()).to(device).numel() == 0, "host to device, 0 bytes");
  expect(on_device.slice(0, 7, 7).cpu().numel() == 0, "device to host, 0 bytes");
  if (!has_copy_kernel) return;

  Tensor target = zeros({100}, kInt32, Device::cpu()).to(device);
  target.slice(0, 30, 40).copy_(host.slice(0, 60, 70));
  Values want(100, 0);
  std::copy(values.begin() + 60, values.begin() + 70, want.begin() + 30);
  expect_values(target, want, "host to device at byte offset 120");
  target.slice(0, 50, 60).copy_(on_device.slice(0, 5, 15));
  std::copy(values.begin() + 5, values.begin() + 15, want.begin() + 50);
  expect_values(target, want, "device to device, from byte offset 20 to byte offset 200");
  target.slice(0, 3, 3).copy_(on_device.slice(0, 9, 9));
  expect_values(target, want, "device to device, 0 bytes");
}

void check_events(Device device) {
  Event start(device), end(device);
  start.record();
  const Tensor t = ones({1 << 16}, kFloat32, Device::cpu()).to(device);
  end.record();
  end.synchronize();
  expect(end.query(), "an event that was synchronized says its work is not done");
  const double ms = start.elapsed_ms(end);
  expect(ms >= 0, fmt::format("elapsed time {} ms between two events in order", ms));
  synchronize(device);
}

// A kernel op the backend lacks must be refused with NotImplemented, naming the op.
ContractCheck check_refusal(const PluginInfo& plugin, Device device) {
  const std::string name = "refusal of a missing op";
  for (const KernelOp& op : kernel_op_table()) {
    if (implements(plugin, op.name) || !op.call_functional) continue;
    const OpInfo* info = find_op_info(op.name);
    if (info == nullptr) continue;
    const std::vector<SampleInput> samples = info->samples(plugin::dtypes_in(op.dtypes).front());
    if (samples.empty()) continue;
    return run_check(name, [&] {
      OpArguments args = samples.front().arguments;
      for (size_t i = 0; i < args.size(); ++i) {
        if (const Tensor* t = std::get_if<Tensor>(&args[i])) args[i] = t->to(device);
      }
      try {
        op.call_functional(args);
      } catch (const Error& e) {
        const std::string message = e.what();
        expect(e.code() == ErrorCode::NotImplemented,
               fmt::format("{} on {} raised an error that is not NotImplemented: {}", op.name,
                           device.str(), message));
        expect(message.find(std::string(op.name)) != std::string::npos,
               fmt::format("the refusal of {} does not name it: {}", op.name, message));
        return;
      }
      throw CheckFailed{
          fmt::format("{}, which the backend does not list, ran on {}", op.name, device.str())};
    });
  }
  return skipped(name, "the backend implements every kernel op");
}

// Several threads run the same ops at once on the device, each with inputs of its own, and
// compare with results computed before on the host.
void check_threads(const PluginInfo& plugin, Device device) {
  struct Job {
    const KernelOp* op;
    OpArguments host_args;
    std::vector<Tensor> expected;
  };
  std::vector<Job> jobs;
  for (const std::string_view name :
       {"add.out", "mul.out", "mm.out", "exp.out", "sum.IntList_out"}) {
    const KernelOp* op = find_kernel_op(name);
    if (!op || !implements(plugin, name) || !op->dtypes.contains(kFloat32)) continue;
    for (const SampleInput& sample : find_op_info(name)->samples(kFloat32)) {
      if (sample.description.find("special") != std::string::npos) continue;
      jobs.push_back({op, sample.arguments, op->call_functional(sample.arguments)});
    }
  }
  expect(!jobs.empty(),
         "none of add.out, mul.out, mm.out, exp.out, sum.IntList_out is "
         "implemented for Float32 to run from several threads");
  constexpr int kThreads = 4, kRounds = 8;
  std::atomic<bool> failed{false};
  std::string failure;
  std::mutex failure_mutex;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      try {
        for (int round = 0; round < kRounds && !failed; ++round) {
          for (size_t j = 0; j < jobs.size(); ++j) {
            const Job& job = jobs[(j + static_cast<size_t>(t) * 7) % jobs.size()];
            OpArguments args = job.host_args;
            for (size_t i = 0; i < args.size(); ++i) {
              if (const Tensor* x = std::get_if<Tensor>(&args[i])) args[i] = x->to(device);
            }
            const std::vector<Tensor> actual = job.op->call_functional(args);
            for (size_t k = 0; k < actual.size(); ++k) {
              if (auto bad =
                      compare_output(*job.op, job.op->outputs[k], actual[k], job.expected[k])) {
                throw CheckFailed{fmt::format("{} on thread {} of {}: {}", job.op->name, t,
                                              kThreads, bad->error)};
              }
            }
          }
        }
      } catch (const CheckFailed& e) {
        std::lock_guard lock(failure_mutex);
        if (!failed.exchange(true)) failure = e.detail;
      } catch (const std::exception& e) {
        std::lock_guard lock(failure_mutex);
        if (!failed.exchange(true)) failure = fmt::format("raised: {}", e.what());
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  expect(!failed, failure);
}

}  // namespace

std::vector<ContractCheck> check_contract(const PluginInfo& plugin, Device device) {
  std::vector<ContractCheck> checks;
  checks.push_back(run_check("devices", [&] { check_devices(plugin, device); }));
  checks.push_back(run_check("refused kernels", [&] {
    std::vector<std::string> refused;
    for (const RefusedKernel& k : plugin.refused_kernels)
      refused.push_back(fmt::format("{} ({})", k.op, k.reason));
    expect(refused.empty(), fmt::format("the core refused {}", fmt::join(refused, "; ")));
  }));
  checks.push_back(run_check("allocate and free", [&] { check_allocations(device); }));
  checks.push_back(run_check("copies", [&] { check_copies(device, implements(plugin, "copy_")); }));
  checks.push_back(plugin.has_events ? run_check("events", [&] { check_events(device); })
                                     : skipped("events",
                                               "the backend has no events of its own (ABI 1.2 "
                                               "adds them): bp::Event waits for the device when it "
                                               "records"));
  checks.push_back(check_refusal(plugin, device));
  checks.push_back(run_check("threads", [&] { check_threads(plugin, device); }));
  return checks;
}

}  // namespace bp::conformance
