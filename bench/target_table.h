// A benchmark program's targets as one table after its report: each row is the ratio of two
// benchmarks of the same run (ours and a reference) next to the target it must meet, read from
// the medians where the run has repetitions. Rows whose benchmarks did not run (filtered out,
// or failed) are left out.
#pragma once

#include "report_support.h"

#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace bench {

struct Target {
  enum class Measure {
    Rate,  // ours / reference of the rate counter (bytes_per_second, or TFLOP/s)
    Time,  // ours / reference of the wall time
  };
  std::string what;  // "add 64M f32 vs device-to-device memcpy"
  std::string ours;  // benchmark names as registered
  std::string reference;
  Measure measure = Measure::Rate;
  double bound = 1.0;  // the ratio must be at least this (or at most, for at_most)
  bool at_most = false;
};

// The console report, then the table of `targets`.
class TargetTableReporter : public benchmark::ConsoleReporter {
 public:
  TargetTableReporter(std::vector<Target> targets, OutputOptions options)
      : ConsoleReporter(options), targets_(std::move(targets)) {}

  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& run : runs) {
      if (!summarises(run)) continue;
      Result& result = results_[run.run_name.function_name];
      result.seconds = run.GetAdjustedRealTime() / benchmark::GetTimeUnitMultiplier(run.time_unit);
      for (const char* counter : {"bytes_per_second", "TFLOP/s"}) {
        const auto found = run.counters.find(counter);
        if (found != run.counters.end()) result.rate = found->second.value;
      }
    }
  }

  void Finalize() override {
    ConsoleReporter::Finalize();
    std::string table =
        "\n| what | ours | reference | ratio | target | met |\n"
        "| --- | --- | --- | --- | --- | --- |\n";
    int rows = 0;
    for (const Target& target : targets_) {
      const auto ours = results_.find(target.ours), reference = results_.find(target.reference);
      if (ours == results_.end() || reference == results_.end()) continue;
      const bool by_time = target.measure == Target::Measure::Time;
      const double a = by_time ? ours->second.seconds : ours->second.rate;
      const double b = by_time ? reference->second.seconds : reference->second.rate;
      if (b <= 0) continue;
      const double ratio = a / b;
      const bool met = target.at_most ? ratio <= target.bound : ratio >= target.bound;
      char row[512];
      std::snprintf(row, sizeof row, "| %s | %s | %s | %.3fx | %s %.2fx | %s |\n",
                    target.what.c_str(), format(a, by_time).c_str(), format(b, by_time).c_str(),
                    ratio, target.at_most ? "<=" : ">=", target.bound, met ? "yes" : "no");
      table += row;
      ++rows;
    }
    if (rows > 0) GetOutputStream() << table;
  }

 private:
  struct Result {
    double seconds = 0;
    double rate = 0;
  };

  static std::string format(double value, bool seconds) {
    char text[64];
    if (seconds) {
      std::snprintf(text, sizeof text, "%.3g us", value * 1e6);
    } else {
      std::snprintf(text, sizeof text, "%.4g", value);
    }
    return text;
  }

  std::vector<Target> targets_;
  std::map<std::string, Result> results_;
};

}  // namespace bench
