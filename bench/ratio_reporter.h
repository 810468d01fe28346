// A console report that ends with ratios of wall times: one benchmark's over another's, of the
// medians where repetitions were asked for. The programs that time Backplane against another
// library (libtorch) read their results from these lines.
#pragma once

#include "report_support.h"

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace bench {

// A ratio the report ends with: the time of one benchmark over another's.
struct Ratio {
  std::string what;
  std::string numerator;
  std::string denominator;
  std::string target;
};

class RatioReporter : public benchmark::ConsoleReporter {
 public:
  RatioReporter(std::vector<Ratio> ratios, int threads, OutputOptions options)
      : ConsoleReporter(options), ratios_(std::move(ratios)), threads_(threads) {}

  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& run : runs) {
      if (!summarises(run)) continue;
      const bool median = run.run_type == Run::RT_Aggregate;
      times_[run.run_name.function_name] = {run.GetAdjustedRealTime(),
                                            median ? run.repetitions : 1};
    }
  }

  void Finalize() override {
    ConsoleReporter::Finalize();
    bool header = false;
    for (const Ratio& ratio : ratios_) {
      const auto numerator = times_.find(ratio.numerator);
      const auto denominator = times_.find(ratio.denominator);
      if (numerator == times_.end() || denominator == times_.end()) continue;
      if (!header) {
        const int64_t repetitions = numerator->second.repetitions;
        GetOutputStream() << fmt::format(
            "\nratios of wall times ({}), {} threads each:\n",
            repetitions > 1 ? fmt::format("medians of {} repetitions", repetitions)
                            : "one run each; --benchmark_repetitions=N for medians",
            threads_);
        header = true;
      }
      GetOutputStream() << fmt::format("  {}: {:.3f}x (target {})\n", ratio.what,
                                       numerator->second.time / denominator->second.time,
                                       ratio.target);
    }
  }

 private:
  struct Times {
    double time;
    int64_t repetitions;
  };
  std::vector<Ratio> ratios_;
  int threads_;
  std::map<std::string, Times> times_;
};

// Runs the registered benchmarks; the console report ends with `ratios`.
inline int run_with_ratios(int argc, char** argv, std::vector<Ratio> ratios, int threads,
                           bool color) {
  const bool console = console_format(argc, argv);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  if (console) {
    RatioReporter reporter(std::move(ratios), threads,
                           color ? RatioReporter::OO_ColorTabular : RatioReporter::OO_Tabular);
    benchmark::RunSpecifiedBenchmarks(&reporter);
  } else {
    benchmark::RunSpecifiedBenchmarks();
  }
  benchmark::Shutdown();
  return 0;
}

}  // namespace bench
