// What the probes of this suite (cpu_cache_probe, packed_weights_probe) report from a child
// process: "name value" lines on stdout, read into a map, and their stderr.
#pragma once

#include "child_process.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace cpu_onednn_test {

struct ProbeReport {
  std::map<std::string, uint64_t> values;
  std::string err;
};

// Runs `argv` with `environment`; it must exit 0.
inline ProbeReport run_probe(const std::vector<std::string>& argv,
                             const test_support::EnvironmentVariables& environment) {
  const test_support::ChildResult result = test_support::run_child(argv, environment);
  INFO("stderr: " << result.err);
  REQUIRE(result.exit_code == 0);
  ProbeReport report{{}, result.err};
  std::istringstream lines(result.out);
  std::string name;
  uint64_t value = 0;
  while (lines >> name >> value) report.values[name] = value;
  return report;
}

}  // namespace cpu_onednn_test
