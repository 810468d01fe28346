// What the benchmark programs that add their own lines to the console report share.
#pragma once

#include <benchmark/benchmark.h>

#include <string_view>

namespace bench {

// The run that stands for a benchmark: its median where it has repetitions, else its one run.
inline bool summarises(const benchmark::BenchmarkReporter::Run& run) {
  using Run = benchmark::BenchmarkReporter::Run;
  if (run.error_occurred) return false;
  const bool median = run.run_type == Run::RT_Aggregate && run.aggregate_name == "median";
  const bool single = run.run_type == Run::RT_Iteration && run.repetitions <= 1;
  return median || single;
}

// Whether the report goes to the console reporter (to which the added lines belong): another
// --benchmark_format gets Google Benchmark's own reporter.
inline bool console_format(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg.starts_with("--benchmark_format=") && arg != "--benchmark_format=console") return false;
  }
  return true;
}

}  // namespace bench
