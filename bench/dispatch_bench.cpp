// The cost of the way from bp::add to the kernel, side by side with the kernel alone.
//
//   BM_add_end_to_end: bp::add on 1-element float32 tensors: meta step, output allocation
//     through the caching allocator, table lookup, DLPack views, the kernel.
//   BM_kernel_direct_with_allocation: the same CPU kernel called through its function pointer
//     with prebuilt views, plus allocating an output tensor: the floor that dispatch adds to.
//
// Their ratio is what the dispatch path costs; the console report ends with it (the ratio of
// the two medians when run with --benchmark_repetitions). See bench/README.md.
#include <backplane/backplane.h>

#include "dispatch/dispatch.h"
#include "dispatch/dlpack_bridge.h"
#include "report_support.h"

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <unistd.h>

#include <cstdio>
#include <map>
#include <string>

namespace {

constexpr const char* kEndToEnd = "BM_add_end_to_end";
constexpr const char* kDirect = "BM_kernel_direct_with_allocation";

void BM_add_end_to_end(benchmark::State& state) {
  const bp::Tensor a = bp::ones({1});
  const bp::Tensor b = bp::ones({1});
  for (auto _ : state) {
    bp::Tensor c = bp::add(a, b);
    benchmark::DoNotOptimize(c.impl());
  }
}
BENCHMARK(BM_add_end_to_end);

void BM_kernel_direct_with_allocation(benchmark::State& state) {
  using bp::detail::OpId;
  const bp::Tensor a = bp::ones({1});
  const bp::Tensor b = bp::ones({1});
  const auto kernel = reinterpret_cast<bp::detail::add_out_kernel>(
      reinterpret_cast<void (*)()>(bp::detail::kernel_in_table(OpId::add_out, bp::Device::cpu())));
  const DLTensor a_view = bp::detail::to_dlpack_view(a);
  const DLTensor b_view = bp::detail::to_dlpack_view(b);
  const bp_scalar alpha = bp::Scalar(1).to_abi();
  for (auto _ : state) {
    bp::Tensor c = bp::empty({1});
    DLTensor c_view = bp::detail::to_dlpack_view(c);
    benchmark::DoNotOptimize(kernel(&a_view, &b_view, alpha, &c_view));
  }
}
BENCHMARK(BM_kernel_direct_with_allocation);

// The console report, followed by the ratio of the end-to-end time to the direct one.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  using ConsoleReporter::ConsoleReporter;

  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& run : runs) {
      if (bench::summarises(run)) {
        const bool median = run.run_type == Run::RT_Aggregate;
        times_[run.run_name.function_name] = {run.GetAdjustedRealTime(), run.GetAdjustedCPUTime(),
                                              benchmark::GetTimeUnitString(run.time_unit),
                                              median ? run.repetitions : 1};
      }
    }
  }

  void Finalize() override {
    ConsoleReporter::Finalize();
    const auto end_to_end = times_.find(kEndToEnd);
    const auto direct = times_.find(kDirect);
    if (end_to_end == times_.end() || direct == times_.end()) return;
    const Times& e = end_to_end->second;
    const Times& d = direct->second;
    GetOutputStream() << fmt::format(
        "\n{} / {} ({}):\n"
        "  wall time {:.1f} {} / {:.1f} {} = {:.2f}x    CPU time {:.1f} {} / {:.1f} {} = {:.2f}x\n",
        kEndToEnd, kDirect,
        e.repetitions > 1 ? fmt::format("medians of {} repetitions", e.repetitions)
                          : std::string("one run each; pass --benchmark_repetitions=5 for medians"),
        e.real, e.unit, d.real, d.unit, e.real / d.real, e.cpu, e.unit, d.cpu, d.unit,
        e.cpu / d.cpu);
  }

 private:
  struct Times {
    double real;
    double cpu;
    const char* unit;
    int64_t repetitions;
  };
  std::map<std::string, Times> times_;
};

}  // namespace

int main(int argc, char** argv) {
  const bool console = bench::console_format(argc, argv);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  if (console) {
    RatioReporter reporter(isatty(fileno(stdout)) ? RatioReporter::OO_ColorTabular
                                                  : RatioReporter::OO_Tabular);
    benchmark::RunSpecifiedBenchmarks(&reporter);
  } else {
    benchmark::RunSpecifiedBenchmarks();
  }
  benchmark::Shutdown();
  return 0;
}
