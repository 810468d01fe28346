// What bp-conformance found, and its three renderings: a table for people, JSON for scripts,
// JUnit XML for a CI's test view.
#pragma once

#include <backplane/conformance/contract.h>
#include <backplane/conformance/runner.h>

#include <ostream>
#include <string>
#include <vector>

namespace bp::conformance {

struct ConformanceReport {
  std::string backend;        // "opencl"
  std::string plugin;         // the file it loaded from
  std::string device;         // "opencl:0"
  std::vector<OpResult> ops;  // ops.yaml order; the ones run and the ones the backend lacks
  size_t implemented = 0;     // kernel ops the backend lists
  size_t total = 0;           // kernel ops in ops.yaml
  std::vector<ContractCheck> contract;
  double seconds = 0;

  // No op case and no contract check failed.
  bool passed() const;
};

void write_table(std::ostream& out, const ConformanceReport& report);
void write_json(std::ostream& out, const ConformanceReport& report);
void write_junit(std::ostream& out, const ConformanceReport& report);

}  // namespace bp::conformance
