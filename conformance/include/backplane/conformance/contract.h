// The plugin contract beyond its kernels' results: that the backend describes its devices,
// allocates and frees, copies with offsets and zero bytes in every direction, records events,
// refuses what it lacks with a clear error, runs one op from several threads at once, and
// shuts down. bp-conformance runs these after the op cases.
#pragma once

#include <backplane/backplane.h>

#include <string>
#include <string_view>
#include <vector>

namespace bp::conformance {

struct ContractCheck {
  std::string name;  // "copies"
  enum class Outcome { Pass, Fail, Skipped } outcome = Outcome::Pass;
  std::string detail;  // what failed, or why the check was skipped
};
std::string_view name_of(ContractCheck::Outcome outcome);

// Whether `plugin` lists a kernel for kernel op `op` ("add.out").
bool implements(const PluginInfo& plugin, std::string_view op);

// The checks that run in this process, on `device` of the backend `plugin` describes.
std::vector<ContractCheck> check_contract(const PluginInfo& plugin, Device device);

}  // namespace bp::conformance
